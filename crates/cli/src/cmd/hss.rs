//! Homomorphic secret sharing applications (seed 004 §6) as processes: `coterie party …
//! hss-setup | hss-vote | hss-feed`, the input clients' `coterie hss upload`, and the demos
//! `coterie demo hss-vote | hss-feed`. Parties 0 and 1 are the servers, party 2 the client; the
//! flows are `coterie_hss::apps::service`, this parses, wires them to the mesh and prints.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use coterie_hss::apps::fs::{Access, Policy, PolicyShape};
use coterie_hss::apps::pir::{Database, Record};
use coterie_hss::apps::repo::Repository;
use coterie_hss::apps::service::{self, CLIENT, ServerState, VoteServerOptions};
use coterie_hss::apps::vote::{Mode, Vote};
use coterie_hss::group::GroupId;
use coterie_hss::scheme::Params;
use coterie_math::bigint::BigInt;
use coterie_math::prg::Csprng;
use coterie_net::{Mesh, Role, TlsMesh};

/// Evaluation mode on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeArg {
    /// Base B = 16, output mod 2^16 with a range check; leakage about δ per evaluation.
    Plain,
    /// Base B = 2 with leakage-absorbing pads (leakage O(δ²)).
    Padded,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Plain => Mode::Plain,
            ModeArg::Padded => Mode::Padded,
        }
    }
}

/// Where a party keeps its files.
#[derive(clap::Args, Clone, Debug)]
pub struct HssDirs {
    /// Base directory of the servers' state (server i keeps DIR/party-<i>/hss.state).
    #[arg(long)]
    dir: PathBuf,
    /// The public repository (a directory: public key and the clients' uploads).
    #[arg(long)]
    repo: PathBuf,
}

impl HssDirs {
    /// The repository, and for a server (party 0 or 1) its state.
    fn open_party(&self, id: usize) -> Result<(Repository, Option<ServerState>), String> {
        let repo = Repository::open(&self.repo).map_err(|e| e.to_string())?;
        let st = if id < 2 {
            Some(ServerState::load(&self.state(id)?).map_err(|e| e.to_string())?)
        } else {
            None
        };
        Ok((repo, st))
    }

    fn state(&self, id: usize) -> Result<PathBuf, String> {
        let d = self.dir.join(format!("party-{id}"));
        std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        Ok(d.join("hss.state"))
    }
}

/// Arguments of `coterie party … hss-setup`.
#[derive(clap::Args, Clone, Debug)]
pub struct SetupCmd {
    #[command(flatten)]
    dirs: HssDirs,
    /// Key for this mode (padded: base 2 and pads; plain: base 16).
    #[arg(long, value_enum, default_value = "padded")]
    mode: ModeArg,
    /// Leakage-absorbing pads to make (padded mode; the paper's N = 100).
    #[arg(long, default_value_t = 100)]
    pads: u32,
    /// INSECURE 128-bit toy group and 16-bit key (no security): tests only.
    #[arg(long)]
    insecure_toy: bool,
}

/// Arguments of `coterie party … hss-vote`.
#[derive(clap::Args, Clone, Debug)]
pub struct VoteCmd {
    #[command(flatten)]
    dirs: HssDirs,
    /// Repository topic holding the voters' uploads.
    #[arg(long, default_value = "poll")]
    topic: String,
    /// Number of voters.
    #[arg(long)]
    clients: u32,
    /// Votes needed (default: majority).
    #[arg(long)]
    threshold: Option<u32>,
    /// Evaluation mode (must match the setup's key).
    #[arg(long, value_enum, default_value = "padded")]
    mode: ModeArg,
    /// Overall failure probability 2^-F per evaluation (default: 7 padded, 14 plain: about 10^-4
    /// leakage either way, spec §6.1).
    #[arg(long)]
    failure_log2: Option<u32>,
    /// Client: attempts before giving up (re-runs after failures).
    #[arg(long, default_value_t = 5)]
    max_attempts: u32,
    /// Client: the expected result ("accept" or "reject"); a different result is an error.
    #[arg(long)]
    expect: Option<String>,
    /// Server: INSECURE test knob — report the first N evaluations as failed (flag and a share
    /// off by one), to exercise the client's re-run.
    #[arg(long, default_value_t = 0)]
    insecure_inject_failures: u32,
}

/// Arguments of `coterie party … hss-feed`.
#[derive(clap::Args, Clone, Debug)]
pub struct FeedCmd {
    #[command(flatten)]
    dirs: HssDirs,
    /// Subscriber: its interest bits, e.g. 1,0,0,1 (one per tag).
    #[arg(long, value_delimiter = ',')]
    interests: Vec<u8>,
    /// Number of records in the digest (public, generated from --seed).
    #[arg(long, default_value_t = 32)]
    records: usize,
    /// Seed of the public demo records (each tag present with probability 3/4).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Failure probability 2^-F per record (7: below 1%).
    #[arg(long, default_value_t = 7)]
    failure_log2: u32,
}

/// Arguments of `coterie party … hss-pir`.
#[derive(clap::Args, Clone, Debug)]
pub struct PirCmd {
    #[command(flatten)]
    dirs: HssDirs,
    /// Number of records of the public demo database (generated from --seed).
    #[arg(long, default_value_t = 200)]
    records: usize,
    /// Attributes per record (each present with probability 1/4).
    #[arg(long, default_value_t = 8)]
    attrs: usize,
    /// Seed of the public demo database.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Client: the attributes a record must have (indices, e.g. 0,3).
    #[arg(long, value_delimiter = ',', default_value = "0,3")]
    wanted: Vec<usize>,
    /// Client: largest number of matches plus failed records to recover.
    #[arg(long, default_value_t = 32)]
    t: u32,
    /// Failure probability 2^-F per record.
    #[arg(long, default_value_t = 10)]
    failure_log2: u32,
}

/// Arguments of `coterie party … hss-triples`.
#[derive(clap::Args, Clone, Debug)]
pub struct TriplesCmd {
    /// Ring size n: triples over Z_(2^n), n ≤ 128.
    #[arg(long, default_value_t = 32)]
    n_bits: u32,
    /// Number of triples.
    #[arg(long, default_value_t = 2)]
    count: usize,
    /// INSECURE 128-bit toy group and 16-bit key (no security): tests only.
    #[arg(long)]
    insecure_toy: bool,
}

/// `coterie party … hss-triples` (two parties): key generation, Beaver triples from HSS, and the
/// demo's opening check.
pub async fn triples(mesh: &mut TlsMesh, a: &TriplesCmd) -> Result<String, String> {
    let id = mesh.id();
    if a.n_bits == 0 || a.n_bits > 128 || a.count == 0 || a.count > 64 {
        return Err("--n-bits 1..128 and --count 1..64".into());
    }
    let params = if a.insecure_toy {
        println!("party {id}: INSECURE toy group (no security): a protocol run only");
        Params::insecure_toy(4, 16, 12)
    } else {
        coterie_hss::apps::correlated::triple_params(a.n_bits, 1.0 / 16.0)
            .map_err(|e| e.to_string())?
    };
    let t0 = std::time::Instant::now();
    let r = service::triples_demo(mesh, &params, a.n_bits, a.count, &mut Csprng::new())
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "party {id}: {} Beaver triple(s) over Z_2^{} from HSS ({} discarded after a double \
         flag), {} bytes sent; opened for the demo: every a·b = c ({:.2} s)",
        r.usable,
        a.n_bits,
        r.discarded,
        r.bytes,
        t0.elapsed().as_secs_f64()
    );
    Ok("HSS triples: checked".into())
}

/// `coterie demo hss-triples`: two processes make Beaver triples from HSS and check them.
pub fn demo_triples(n_bits: u32, count: usize, insecure_toy: bool) -> Result<(), String> {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo-hss-triples");
    let res = (|| {
        let config = super::demo::write_config(&dir.join("net"), &[Role::Node, Role::Node])?;
        let (n, c) = (n_bits.to_string(), count.to_string());
        let mut args = vec!["hss-triples", "--n-bits", &n, "--count", &c];
        if insecure_toy {
            println!("INSECURE toy group (no security): a fast protocol run only");
            args.push("--insecure-toy");
        }
        super::demo::run_processes(&config, 2, &args, 600)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    res
}

/// Arguments of `coterie party … hss-fs`.
#[derive(clap::Args, Clone, Debug)]
pub struct FsCmd {
    #[command(flatten)]
    dirs: HssDirs,
    /// The file's name in the repository.
    #[arg(long)]
    name: String,
    /// Client: its attribute vector, e.g. 1,0,1,0.
    #[arg(long, value_delimiter = ',')]
    attrs: Vec<u8>,
    /// Client: where to write the file when access is granted.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Client: "granted" or "denied"; another outcome is an error.
    #[arg(long)]
    expect: Option<String>,
}

/// `coterie party … hss-fs`: the servers answer grant requests, the client opens the file.
pub async fn fs(mesh: &mut TlsMesh, a: &FsCmd) -> Result<String, String> {
    let id = mesh.id();
    if a.attrs.iter().any(|&b| b > 1) {
        return Err("--attrs: one 0 or 1 per attribute".into());
    }
    let attrs: Vec<bool> = a.attrs.iter().map(|&b| b == 1).collect();
    let (repo, st) = a.dirs.open_party(id)?;
    let t0 = std::time::Instant::now();
    let r = service::fs_run(
        mesh,
        &repo,
        st.as_ref().map(|s| (s, a.dirs.dir.as_path())),
        &a.name,
        &attrs,
        5,
        &mut Csprng::new(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let Some(access) = r else {
        return Ok("HSS file system server: done".into());
    };
    let outcome = match access {
        Access::Granted(text) => {
            if let Some(out) = &a.out {
                std::fs::write(out, &text).map_err(|e| format!("{}: {e}", out.display()))?;
            }
            println!(
                "party {id}: access granted to {:?}: {} bytes decrypted ({:.2} s)",
                a.name,
                text.len(),
                t0.elapsed().as_secs_f64()
            );
            "granted"
        }
        Access::Denied => {
            println!(
                "party {id}: access to {:?} denied by its hidden policy",
                a.name
            );
            "denied"
        }
        Access::Rerun => return Err("every attempt failed (both servers flagged)".into()),
    };
    if let Some(want) = &a.expect
        && want != outcome
    {
        return Err(format!("access {outcome}, expected {want}"));
    }
    Ok(format!("HSS file system: {outcome}"))
}

/// `coterie demo hss-fs`: the owner's setup and one file under the policy (a0 ∧ a2) ∨ a3 of four
/// attributes; then a client with attributes 1,0,1,0 (granted, content compared) and one with
/// 0,1,1,0 (denied), each a run of two server processes and the client.
pub fn demo_fs(insecure_toy: bool) -> Result<(), String> {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo-hss-fs");
    let res = (|| {
        let config = super::demo::write_config(
            &dir.join("net"),
            &[Role::Server, Role::Server, Role::Client],
        )?;
        let s = |p: &str| dir.join(p).to_string_lossy().to_string();
        let (state, repo, owner, plain, got) = (
            s("state"),
            s("repo"),
            s("owner.key"),
            s("report.txt"),
            s("got.txt"),
        );
        let text = "quarterly report: for cardiology staff and admins only\n";
        std::fs::write(&plain, text).map_err(|e| e.to_string())?;
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let step = |args: &[&str]| -> Result<(), String> {
            let o = Command::new(&exe)
                .args(args)
                .output()
                .map_err(|e| e.to_string())?;
            print!("{}", String::from_utf8_lossy(&o.stdout));
            if o.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&o.stderr).to_string())
            }
        };
        let mut setup = vec!["hss", "fs-setup", "--dir", &state, "--repo", &repo];
        setup.extend(["--owner-key", &owner]);
        if insecure_toy {
            println!("INSECURE toy group (no security): a fast protocol run only");
            setup.push("--insecure-toy");
        }
        step(&setup)?;
        step(&[
            "hss",
            "fs-publish",
            "--dir",
            &state,
            "--repo",
            &repo,
            "--owner-key",
            &owner,
            "--name",
            "report",
            "--file",
            &plain,
            "--attrs",
            "4",
            "--policy",
            "0,2;3",
        ])?;
        let client = |attrs: &str, expect: &str| {
            super::demo::run_processes(
                &config,
                3,
                &[
                    "hss-fs", "--dir", &state, "--repo", &repo, "--name", "report", "--attrs",
                    attrs, "--out", &got, "--expect", expect,
                ],
                600,
            )
        };
        client("1,0,1,0", "granted")?;
        let back = std::fs::read_to_string(&got).map_err(|e| e.to_string())?;
        if back != text {
            return Err("the decrypted file differs from the published one".into());
        }
        println!("the granted client's copy equals the published file");
        client("0,1,1,0", "denied")
    })();
    let _ = std::fs::remove_dir_all(&dir);
    res
}

/// `coterie hss …`: local steps of the HSS applications (no network).
#[derive(clap::Subcommand)]
pub enum HssCmd {
    /// File system (seed 004 §6.2), data owner: generate the secret-key HSS keys of the owner's
    /// files (the owner deals the two servers' key shares of its own data), write each server's
    /// state and the owner's key (owner-only), publish the public key.
    FsSetup {
        #[command(flatten)]
        dirs: HssDirs,
        /// The owner's key file (written owner-only).
        #[arg(long)]
        owner_key: PathBuf,
        /// INSECURE 128-bit toy group and 16-bit key (no security): tests only.
        #[arg(long)]
        insecure_toy: bool,
    },
    /// File system, data owner: publish FILE under a policy: clauses separated by ';', each the
    /// attribute indices it requires, e.g. "0,2;3" = (a0 ∧ a2) ∨ a3.
    FsPublish {
        #[command(flatten)]
        dirs: HssDirs,
        /// The owner's key file.
        #[arg(long)]
        owner_key: PathBuf,
        /// Name of the file in the repository (a-z, 0-9, '_' and '-').
        #[arg(long)]
        name: String,
        /// The file to publish.
        #[arg(long)]
        file: PathBuf,
        /// Number of client attributes.
        #[arg(long)]
        attrs: u32,
        /// Clause slots of the (public) policy shape.
        #[arg(long, default_value_t = 2)]
        slots: u32,
        /// The (secret) policy.
        #[arg(long)]
        policy: String,
    },
    /// An input client encrypts its bit under the published key and uploads it to the public
    /// repository.
    Upload {
        /// The public repository.
        #[arg(long)]
        repo: PathBuf,
        /// Topic.
        #[arg(long, default_value = "poll")]
        topic: String,
        /// This client's name (a-z, 0-9, '_' and '-').
        #[arg(long)]
        name: String,
        /// The bit (0 or 1).
        #[arg(long)]
        bit: u8,
    },
}

/// Runs `coterie hss …`.
pub fn run(cmd: HssCmd) -> Result<(), String> {
    match cmd {
        HssCmd::FsSetup {
            dirs,
            owner_key,
            insecure_toy,
        } => {
            let params = if insecure_toy {
                println!("INSECURE toy group (no security)");
                Params::insecure_toy(4, 16, 10)
            } else {
                Params::with_failure(GroupId::P1536, 160, 10, 4, 4).map_err(|e| e.to_string())?
            };
            let repo = Repository::create(&dirs.repo).map_err(|e| e.to_string())?;
            service::fs_owner_setup(&params, &dirs.dir, &repo, &owner_key, &mut Csprng::new())
                .map_err(|e| e.to_string())?;
            println!(
                "file system: keys generated by the data owner (secret-key HSS), servers' state \
                 under {}, public key in {}",
                dirs.dir.display(),
                dirs.repo.display()
            );
            Ok(())
        }
        HssCmd::FsPublish {
            dirs,
            owner_key,
            name,
            file,
            attrs,
            slots,
            policy,
        } => {
            let clauses = policy
                .split(';')
                .map(|c| {
                    c.split(',')
                        .filter(|t| !t.trim().is_empty())
                        .map(|t| {
                            t.trim()
                                .parse::<u32>()
                                .map_err(|_| format!("--policy: {t:?} is not an attribute index"))
                        })
                        .collect::<Result<Vec<u32>, String>>()
                })
                .collect::<Result<Vec<_>, String>>()?;
            let policy = Policy::new(attrs, clauses).map_err(|e| e.to_string())?;
            let shape = PolicyShape {
                num_attrs: attrs,
                slots,
            };
            let text = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let repo = Repository::open(&dirs.repo).map_err(|e| e.to_string())?;
            service::fs_publish(
                &owner_key,
                &dirs.dir,
                &repo,
                &shape,
                &policy,
                &name,
                &text,
                &mut Csprng::new(),
            )
            .map_err(|e| e.to_string())?;
            println!(
                "file {name:?} ({} bytes) published under a hidden policy ({attrs} attributes, \
                 {slots} clause slots)",
                text.len()
            );
            Ok(())
        }
        HssCmd::Upload {
            repo,
            topic,
            name,
            bit,
        } => {
            if bit > 1 {
                return Err("the bit must be 0 or 1".into());
            }
            let repo = Repository::open(&repo).map_err(|e| e.to_string())?;
            let pk = repo.public_key().map_err(|e| e.to_string())?;
            let enc = pk.encryptor().map_err(|e| e.to_string())?;
            let ct = enc.encrypt(&pk, &BigInt::from(bit), &mut Csprng::new());
            let path = repo
                .upload(&topic, &name, &[ct])
                .map_err(|e| e.to_string())?;
            println!("{name}: encrypted vote uploaded to {}", path.display());
            Ok(())
        }
    }
}

fn setup_params(mode: ModeArg, insecure_toy: bool) -> Result<Params, String> {
    let log_base = match mode {
        ModeArg::Plain => 4,
        ModeArg::Padded => 1,
    };
    if insecure_toy {
        return Ok(Params::insecure_toy(log_base, 16, 10));
    }
    // d is chosen per evaluation from its failure target; window R = 4 keeps one input's pairing
    // tables in tens of MB.
    Params::with_failure(GroupId::P1536, 160, 10, log_base, 4).map_err(|e| e.to_string())
}

/// `coterie party … hss-setup`.
pub async fn setup(mesh: &mut TlsMesh, a: &SetupCmd) -> Result<String, String> {
    let id = mesh.id();
    if a.insecure_toy {
        println!("party {id}: INSECURE toy group (no security): a protocol run only");
    }
    let params = setup_params(a.mode, a.insecure_toy)?;
    let pads = if a.mode == ModeArg::Padded { a.pads } else { 0 };
    let repo = Repository::create(&a.dirs.repo).map_err(|e| e.to_string())?;
    let state = if id < 2 {
        a.dirs.state(id)?
    } else {
        PathBuf::new()
    };
    let t0 = std::time::Instant::now();
    let r = service::setup(mesh, &params, pads, &state, &repo, &mut Csprng::new())
        .await
        .map_err(|e| e.to_string())?;
    Ok(match r {
        Some(r) => format!(
            "HSS setup: distributed key (B = {}, s = {}) and {} pads in {:.2} s, {} bytes sent",
            params.base(),
            params.s(),
            r.pads,
            t0.elapsed().as_secs_f64(),
            r.bytes_sent
        ),
        None => "HSS setup: client, nothing to do".into(),
    })
}

/// `coterie party … hss-vote`.
pub async fn vote(mesh: &mut TlsMesh, a: &VoteCmd) -> Result<String, String> {
    let id = mesh.id();
    let vote = match a.threshold {
        Some(t) => Vote::threshold(t, a.clients),
        None => Vote::majority(a.clients),
    }
    .map_err(|e| e.to_string())?;
    let mode: Mode = a.mode.into();
    let failure_log2 = a.failure_log2.unwrap_or(match mode {
        Mode::Padded => 7,
        Mode::Plain => 14,
    });
    let repo = Repository::open(&a.dirs.repo).map_err(|e| e.to_string())?;
    let t0 = std::time::Instant::now();
    if id == CLIENT {
        let nonce = rand::Rng::next_u64(&mut Csprng::new());
        let r = service::vote_client(
            mesh,
            &a.topic,
            vote,
            mode,
            failure_log2,
            nonce,
            a.max_attempts,
        )
        .await
        .map_err(|e| e.to_string())?;
        let verdict = if r.accepted { "accept" } else { "reject" };
        println!(
            "party {id}: {}-out-of-{} vote over {} uploads: {verdict} ({} attempt(s), {} RMS \
             multiplications per server per attempt{}, {:.2} s)",
            vote.threshold,
            vote.clients,
            r.clients.len(),
            r.attempts,
            r.mults,
            r.pad.map(|p| format!(", pad {p}")).unwrap_or_default(),
            t0.elapsed().as_secs_f64()
        );
        if let Some(want) = &a.expect
            && want != verdict
        {
            return Err(format!("vote result {verdict}, expected {want}"));
        }
        return Ok(format!("HSS vote: {verdict}"));
    }
    if id > 1 {
        return Err("parties 0 and 1 are the servers, party 2 the client".into());
    }
    let opts = VoteServerOptions {
        insecure_inject_failures: a.insecure_inject_failures,
    };
    if opts.insecure_inject_failures > 0 {
        println!(
            "party {id}: INSECURE test knob: the first {} evaluation(s) reported as failed",
            opts.insecure_inject_failures
        );
    }
    let n = service::vote_server(mesh, &a.dirs.state(id)?, &repo, &opts)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "HSS vote server: {n} evaluation(s) in {:.2} s",
        t0.elapsed().as_secs_f64()
    ))
}

/// The public demo records: `count` records of `tags` bits from `seed`, each tag present with
/// probability 3/4.
pub fn demo_records(seed: u64, count: usize, tags: usize) -> Vec<Vec<bool>> {
    let mut xof = blake3::Hasher::new();
    xof.update(b"coterie/demo/hss-feed-records/v1");
    xof.update(&seed.to_le_bytes());
    let mut r = xof.finalize_xof();
    (0..count)
        .map(|_| {
            (0..tags)
                .map(|_| {
                    let mut b = [0u8; 1];
                    r.fill(&mut b);
                    b[0] & 3 != 0
                })
                .collect()
        })
        .collect()
}

/// `coterie party … hss-feed`.
pub async fn feed(mesh: &mut TlsMesh, a: &FeedCmd) -> Result<String, String> {
    let id = mesh.id();
    if a.interests.is_empty() || a.interests.iter().any(|&b| b > 1) {
        return Err("--interests: one 0 or 1 per tag, e.g. 1,0,0,1".into());
    }
    let interests: Vec<bool> = a.interests.iter().map(|&b| b == 1).collect();
    let records = demo_records(a.seed, a.records, interests.len());
    let (repo, st) = a.dirs.open_party(id)?;
    let t0 = std::time::Instant::now();
    let r = service::feed_run(
        mesh,
        &repo,
        st.as_ref(),
        &interests,
        &records,
        a.failure_log2,
        &mut Csprng::new(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let Some(parsed) = r else {
        return Ok(format!(
            "HSS feed server: digest of {} records in {:.2} s",
            records.len(),
            t0.elapsed().as_secs_f64()
        ));
    };
    let mut matched = vec![];
    let mut unknown = vec![];
    for (j, (rec, got)) in records.iter().zip(&parsed).enumerate() {
        let want = interests.iter().zip(rec).all(|(&w, &t)| !w || t);
        match got {
            Some(g) if *g != want => {
                return Err(format!(
                    "record {j}: digest says {g}, plaintext says {want}"
                ));
            }
            Some(true) => matched.push(j),
            Some(false) => {}
            None => unknown.push(j),
        }
    }
    println!(
        "party {id}: {} of {} records match the encrypted interests: {:?}; {} record(s) to \
         fetch again after a failure{}; all equal to the plaintext filter ({:.2} s)",
        matched.len(),
        records.len(),
        matched,
        unknown.len(),
        if unknown.is_empty() {
            String::new()
        } else {
            format!(" {unknown:?}")
        },
        t0.elapsed().as_secs_f64()
    );
    Ok("HSS feed: digest parsed".into())
}

/// The public demo database: `count` records of `attrs` attribute bits (each present with
/// probability 1/4) and a 40-bit payload, from `seed`.
pub fn demo_database(seed: u64, count: usize, attrs: usize) -> Database {
    let mut xof = blake3::Hasher::new();
    xof.update(b"coterie/demo/hss-pir-database/v1");
    xof.update(&seed.to_le_bytes());
    let mut r = xof.finalize_xof();
    let mut byte = || {
        let mut b = [0u8; 8];
        r.fill(&mut b);
        u64::from_le_bytes(b)
    };
    Database {
        records: (0..count)
            .map(|_| Record {
                attrs: (0..attrs).map(|_| byte() & 3 == 0).collect(),
                payload: byte() & ((1 << 40) - 1),
            })
            .collect(),
    }
}

/// `coterie party … hss-pir`.
pub async fn pir(mesh: &mut TlsMesh, a: &PirCmd) -> Result<String, String> {
    let id = mesh.id();
    let db = demo_database(a.seed, a.records, a.attrs);
    if a.wanted.iter().any(|&w| w >= a.attrs) {
        return Err(format!("--wanted: attribute indices below {}", a.attrs));
    }
    let wanted: Vec<bool> = (0..a.attrs).map(|i| a.wanted.contains(&i)).collect();
    let (repo, st) = a.dirs.open_party(id)?;
    let t0 = std::time::Instant::now();
    let r = service::pir_run(
        mesh,
        &repo,
        st.as_ref().map(|s| (s, &db)),
        &wanted,
        db.records.len(),
        a.t,
        a.failure_log2,
        &mut Csprng::new(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let Some(out) = r else {
        return Ok(format!(
            "HSS PIR server: answered over {} records in {:.2} s",
            db.records.len(),
            t0.elapsed().as_secs_f64()
        ));
    };
    let plain = db.plain_matches(&wanted);
    let expected: Vec<(usize, u64)> = plain
        .iter()
        .filter(|(i, _)| !out.result.failed.contains(i))
        .copied()
        .collect();
    if out.result.matches != expected {
        return Err(format!(
            "decoded matches {:?} differ from the plaintext {:?}",
            out.result.matches, plain
        ));
    }
    let idx: Vec<usize> = out.result.matches.iter().map(|m| m.0).collect();
    println!(
        "party {id}: {} of {} records have attributes {:?}: {:?} (payloads decoded); {} failed \
         record(s) to query again{}; answers of {} and {} bytes; equal to the plaintext search \
         ({:.2} s)",
        idx.len(),
        db.records.len(),
        a.wanted,
        idx,
        out.result.failed.len(),
        if out.result.failed.is_empty() {
            String::new()
        } else {
            format!(" {:?}", out.result.failed)
        },
        out.answer_bytes[0],
        out.answer_bytes[1],
        t0.elapsed().as_secs_f64()
    );
    Ok("HSS PIR: query answered".into())
}

/// A demo's PKI for two servers and a client under `dir/net`, and the servers' one-time setup
/// (state under `dir/state`, public repository `dir/repo`) as processes; returns the config and
/// the two directories as arguments.
fn demo_setup(
    dir: &Path,
    mode: ModeArg,
    insecure_toy: bool,
) -> Result<(PathBuf, String, String), String> {
    let config = super::demo::write_config(
        &dir.join("net"),
        &[Role::Server, Role::Server, Role::Client],
    )?;
    let (state, repo) = (
        dir.join("state").to_string_lossy().to_string(),
        dir.join("repo").to_string_lossy().to_string(),
    );
    let mut setup = vec![
        "hss-setup",
        "--dir",
        &state,
        "--repo",
        &repo,
        "--mode",
        mode_str(mode),
    ];
    if insecure_toy {
        println!("INSECURE toy group (no security): a fast protocol run only");
        setup.push("--insecure-toy");
    }
    super::demo::run_processes(&config, 3, &setup, 300)?;
    Ok((config, state, repo))
}

fn mode_str(m: ModeArg) -> &'static str {
    match m {
        ModeArg::Plain => "plain",
        ModeArg::Padded => "padded",
    }
}

/// `coterie demo hss-vote`: setup between the two servers, `clients` input clients upload
/// random votes (each its own process), then the output client asks both servers for the
/// majority and checks it against the plaintext.
pub fn demo_vote(
    clients: u32,
    mode: ModeArg,
    inject_failure: bool,
    insecure_toy: bool,
) -> Result<(), String> {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo-hss-vote");
    let res = run_demo_vote(&dir, clients, mode, inject_failure, insecure_toy);
    let _ = std::fs::remove_dir_all(&dir);
    res
}

fn run_demo_vote(
    dir: &Path,
    clients: u32,
    mode: ModeArg,
    inject_failure: bool,
    insecure_toy: bool,
) -> Result<(), String> {
    let vote = Vote::majority(clients).map_err(|e| e.to_string())?;
    let (config, state, repo) = demo_setup(dir, mode, insecure_toy)?;
    // The voters: random bits, each uploaded by its own process.
    let mut rng = Csprng::new();
    let votes: Vec<bool> = (0..clients)
        .map(|_| rand::Rng::next_u64(&mut rng) & 1 == 1)
        .collect();
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let kids = votes
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            Command::new(&exe)
                .args(["hss", "upload", "--repo", &repo, "--topic", "poll"])
                .args(["--name", &format!("voter-{i:03}")])
                .args(["--bit", if v { "1" } else { "0" }])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start voter {i}: {e}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    for (i, k) in kids.into_iter().enumerate() {
        let out = k.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "voter {i} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let yes = votes.iter().filter(|&&v| v).count();
    let want = vote.plain(&votes).map_err(|e| e.to_string())?;
    println!(
        "{clients} voters uploaded their encrypted votes ({yes} yes; majority needs {}): \
         expecting {}",
        vote.threshold,
        if want { "accept" } else { "reject" }
    );
    let n = clients.to_string();
    let mut run = vec![
        "hss-vote",
        "--dir",
        &state,
        "--repo",
        &repo,
        "--clients",
        &n,
        "--mode",
        mode_str(mode),
        "--expect",
        if want { "accept" } else { "reject" },
    ];
    if inject_failure {
        run.extend(["--insecure-inject-failures", "1"]);
    }
    super::demo::run_processes(&config, 3, &run, 600)
}

/// `coterie demo hss-feed`: setup (plain key), then a subscriber registers its encrypted
/// interests and parses the servers' digests of the public demo records, checked against the
/// plaintext filter.
pub fn demo_feed(tags: usize, records: usize, insecure_toy: bool) -> Result<(), String> {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo-hss-feed");
    let res = (|| {
        if tags == 0 || tags > 256 {
            return Err("--tags: 1 to 256".to_string());
        }
        let (config, state, repo) = demo_setup(&dir, ModeArg::Plain, insecure_toy)?;
        // The subscriber wants two of the tags.
        let interests: Vec<&str> = (0..tags)
            .map(|i| if i == 0 || i == tags / 2 { "1" } else { "0" })
            .collect();
        let interests = interests.join(",");
        let n = records.to_string();
        super::demo::run_processes(
            &config,
            3,
            &[
                "hss-feed",
                "--dir",
                &state,
                "--repo",
                &repo,
                "--interests",
                &interests,
                "--records",
                &n,
            ],
            600,
        )
    })();
    let _ = std::fs::remove_dir_all(&dir);
    res
}

/// `coterie demo hss-pir`: setup (plain key), then a client's boolean query over the public demo
/// database, answered by both servers, decoded and checked against the plaintext search.
pub fn demo_pir(records: usize, insecure_toy: bool) -> Result<(), String> {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo-hss-pir");
    let res = (|| {
        let (config, state, repo) = demo_setup(&dir, ModeArg::Plain, insecure_toy)?;
        let n = records.to_string();
        super::demo::run_processes(
            &config,
            3,
            &["hss-pir", "--dir", &state, "--repo", &repo, "--records", &n],
            600,
        )
    })();
    let _ = std::fs::remove_dir_all(&dir);
    res
}
