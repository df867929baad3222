//! The applications' flows over the in-memory mesh with three parties (servers 0 and 1, client
//! 2): distributed setup with pads, clients' uploads to the repository, votes in both modes with
//! a re-run after an injected failure and a burned pad, a corrupted server answer detected by
//! the range check, and the RSS feed against the plaintext matches. Toy parameters (insecure,
//! fast); fixed seeds are insecure and used only here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use coterie_hss::apps::repo::Repository;
use coterie_hss::apps::service::{self, ServerState, VoteServerOptions};
use coterie_hss::apps::vote::{Mode, Vote};
use coterie_hss::scheme::Params;
use coterie_math::bigint::BigInt;
use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
use rand::SeedableRng;

fn opts() -> MeshOptions {
    MeshOptions {
        timeout: Duration::from_secs(60),
        ..MeshOptions::default()
    }
}

fn state_path(dir: &Path, id: usize) -> PathBuf {
    dir.join(format!("server-{id}.state"))
}

async fn setup(dir: &Path, params: Params, pads: u32) -> Repository {
    let repo = Repository::create(&dir.join("repo")).unwrap();
    let meshes = InMemoryMesh::group(3, opts());
    let mut tasks = vec![];
    for mut m in meshes {
        let (dir, repo) = (dir.to_path_buf(), repo.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(100 + m.id() as u64);
            let id = m.id();
            let r = service::setup(
                &mut m,
                &params,
                pads,
                &state_path(&dir, id),
                &repo,
                &mut rng,
            )
            .await
            .unwrap();
            m.close().await.unwrap();
            r
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let r = t.await.unwrap();
        assert_eq!(
            r.is_some(),
            i < 2,
            "only the servers take part in the setup"
        );
    }
    repo
}

fn upload_votes(repo: &Repository, topic: &str, votes: &[bool]) {
    let pk = repo.public_key().unwrap();
    let enc = pk.encryptor().unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
    for (i, &v) in votes.iter().enumerate() {
        let ct = enc.encrypt(&pk, &BigInt::from(u8::from(v)), &mut rng);
        repo.upload(topic, &format!("voter-{i:03}"), &[ct]).unwrap();
    }
}

async fn run_vote(
    dir: &Path,
    repo: &Repository,
    vote: Vote,
    mode: Mode,
    inject: [u32; 2],
) -> coterie_hss::Result<service::VoteResult> {
    let meshes = InMemoryMesh::group(3, opts());
    let mut tasks = vec![];
    for mut m in meshes {
        let (dir, repo) = (dir.to_path_buf(), repo.clone());
        tasks.push(tokio::spawn(async move {
            let id = m.id();
            let r = if id == service::CLIENT {
                service::vote_client(&mut m, "poll", vote, mode, 10, 1000, 4)
                    .await
                    .map(Some)
            } else {
                let o = VoteServerOptions {
                    insecure_inject_failures: inject[id],
                };
                service::vote_server(&mut m, &state_path(&dir, id), &repo, &o)
                    .await
                    .map(|_| None)
            };
            m.close().await.unwrap();
            r
        }));
    }
    let mut out = None;
    for t in tasks {
        if let Some(r) = t.await.unwrap()? {
            out = Some(r);
        }
    }
    Ok(out.expect("the client's result"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vote_with_pads_reruns_after_injected_failure_and_burns_the_pad() {
    let dir = coterie_base::fsio::unique_temp_dir("hss-apps-vote-pads");
    let repo = setup(&dir, Params::insecure_toy(1, 12, 12), 4).await;
    let votes = [true, false, true, true, false];
    upload_votes(&repo, "poll", &votes);
    let vote = Vote::majority(5).unwrap();
    let want = vote.plain(&votes).unwrap();
    // Both servers fail their first evaluation: the client re-runs with pad 1.
    let r = run_vote(&dir, &repo, vote, Mode::Padded, [1, 1])
        .await
        .unwrap();
    assert_eq!(r.accepted, want);
    assert!(r.attempts >= 2, "{r:?}");
    assert!(r.pad.unwrap() >= 1, "{r:?}");
    assert_eq!(r.clients.len(), 5);
    // Pad 0 may have leaked: neither server will use it again, also after a restart.
    for id in 0..2 {
        let st = ServerState::load(&state_path(&dir, id)).unwrap();
        assert!(st.next_pad >= 1);
        assert_eq!(st.pads.len(), 4);
    }
    // A second poll asks for pad 0 again: the servers answer that it is burned, and the client
    // asks again with the first pad neither has burned.
    let burned = ServerState::load(&state_path(&dir, 0)).unwrap().next_pad;
    let r2 = run_vote(&dir, &repo, vote, Mode::Padded, [0, 0])
        .await
        .unwrap();
    assert_eq!(r2.accepted, want);
    assert!(r2.pad.unwrap() >= burned, "{r2:?} reuses a burned pad");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_vote_and_corrupted_answer_is_detected() {
    let dir = coterie_base::fsio::unique_temp_dir("hss-apps-vote-plain");
    let repo = setup(&dir, Params::insecure_toy(4, 16, 12), 0).await;
    let votes = [false, true, false, false, true, true, false];
    upload_votes(&repo, "poll", &votes);
    for t in [1u32, 3, 4, 7] {
        let vote = Vote::threshold(t, 7).unwrap();
        let r = run_vote(&dir, &repo, vote, Mode::Plain, [0, 0])
            .await
            .unwrap();
        assert_eq!(r.accepted, vote.plain(&votes).unwrap(), "t = {t}");
        assert_eq!(r.mults as usize, {
            let (a, b) = vote.multiplications().unwrap();
            a + b
        });
    }
    // Server 0 alone returns a share off by one. Where the result is 1 the client reconstructs
    // 2 and detects the corruption; where it is 0 the client reconstructs 1: the documented
    // undetectable case (a ±1 shift of a share of a bit).
    let yes = Vote::threshold(3, 7).unwrap();
    assert!(yes.plain(&votes).unwrap());
    let err = run_vote(&dir, &repo, yes, Mode::Plain, [1, 0])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("corrupted answer"), "{err}");
    let no = Vote::majority(7).unwrap();
    assert!(!no.plain(&votes).unwrap());
    let wrong = run_vote(&dir, &repo, no, Mode::Plain, [1, 0])
        .await
        .unwrap();
    assert!(wrong.accepted, "the undetectable shift flips 0 to 1");
    // A stale or foreign upload is refused with the file named.
    std::fs::write(repo.dir().join("poll").join("voter-003.hss"), b"junk").unwrap();
    let err = run_vote(&dir, &repo, no, Mode::Plain, [0, 0])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("voter-003"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feed_matches_the_plaintext_conjunction() {
    let dir = coterie_base::fsio::unique_temp_dir("hss-apps-feed");
    let repo = setup(&dir, Params::insecure_toy(4, 16, 12), 0).await;
    let interests = vec![true, false, false, true, false, false];
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
    let records: Vec<Vec<bool>> = (0..24)
        .map(|_| {
            (0..6)
                .map(|_| rand::Rng::next_u32(&mut rng) % 3 != 0)
                .collect()
        })
        .collect();
    let meshes = InMemoryMesh::group(3, opts());
    let mut tasks = vec![];
    for mut m in meshes {
        let (dir, repo, interests, records) = (
            dir.clone(),
            repo.clone(),
            interests.clone(),
            records.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let id = m.id();
            let st = (id < 2).then(|| ServerState::load(&state_path(&dir, id)).unwrap());
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9 + id as u64);
            let r = service::feed_run(
                &mut m,
                &repo,
                st.as_ref(),
                &interests,
                &records,
                7,
                &mut rng,
            )
            .await
            .unwrap();
            m.close().await.unwrap();
            r
        }));
    }
    let mut parsed = None;
    for t in tasks {
        if let Some(p) = t.await.unwrap() {
            parsed = Some(p);
        }
    }
    let parsed = parsed.unwrap();
    let mut known = 0;
    let mut matches = 0;
    for (r, got) in records.iter().zip(&parsed) {
        let want = interests.iter().zip(r).all(|(&w, &t)| !w || t);
        if let Some(g) = got {
            assert_eq!(*g, want, "record {r:?}");
            known += 1;
            matches += usize::from(want);
        }
    }
    assert!(known >= 22, "{known}/24 records decided");
    assert!(
        matches > 0 && matches < known,
        "the records must include both cases"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
