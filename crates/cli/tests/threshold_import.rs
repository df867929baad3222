//! Key import through the CLI with real processes over loopback TLS: TFHE-rs (the `tfhe` crate,
//! a dev-dependency) makes a binary `LweSecretKey` of dimension 1024 and encrypts known bits;
//! 4 nodes (`coterie party ... threshold`, **insecure** dealer material) start with node 2
//! passing `--import-key` (the key as TFHE-rs bincode; in a second service, as TFHE-rs safe
//! serialization), and `coterie decrypt` on the TFHE-rs ciphertext files must print exactly the
//! encrypted bits, which TFHE-rs's own decryption also gives. Key files of the wrong dimension or
//! with non-binary coefficients are refused at every node with a clear message, and a restart
//! with `--import-key` when the key exists is refused (the key is never replaced).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tfhe::Versionize;
use tfhe::core_crypto::prelude as tc;

mod common;
use common::{Nodes, coterie, run_ok as run};

const N: usize = 4;
/// The node that holds the key.
const HOLDER: usize = 2;

/// Starts the 4 nodes on `stores`, node `HOLDER` with `--import-key import` when given; logs in
/// `dir/node<i>-<tag>.log`.
fn start(dir: &Path, stores: &Path, client: &str, import: Option<&Path>, tag: &str) -> Nodes {
    let cfg = dir.join("certs/party.toml");
    Nodes::new(
        (0..N)
            .map(|i| {
                let log = std::fs::File::create(dir.join(format!("node{i}-{tag}.log"))).unwrap();
                let err = log.try_clone().unwrap();
                let mut c = coterie();
                c.args(["party", "--config"])
                    .arg(&cfg)
                    .args(["--id", &i.to_string(), "--timeout-s", "10", "threshold"])
                    .arg("--dir")
                    .arg(stores)
                    .args(["--pool", "4", "--chunk", "4", "--client-listen", client])
                    .args(["--idle-exit-s", "3"]);
                if let (Some(f), true) = (import, i == HOLDER) {
                    c.arg("--import-key").arg(f);
                }
                c.stdout(log).stderr(err).spawn().unwrap()
            })
            .collect(),
    )
}

/// Waits for every node to exit; returns whether each succeeded and its log.
fn finish(dir: &Path, mut nodes: Nodes, tag: &str) -> Vec<(bool, String)> {
    let t = Instant::now();
    let mut out = Vec::new();
    for (i, c) in nodes.0.iter_mut().flatten().enumerate() {
        let st = loop {
            if let Ok(Some(s)) = c.try_wait() {
                break s;
            }
            assert!(t.elapsed() < Duration::from_secs(120), "node {i} hangs");
            std::thread::sleep(Duration::from_millis(50));
        };
        let log = std::fs::read_to_string(dir.join(format!("node{i}-{tag}.log"))).unwrap();
        out.push((st.success(), log));
    }
    nodes.0.clear();
    out
}

/// Runs `coterie decrypt --message-bits 1` on `files` (retrying while node 0's listener is not
/// up) and returns what it printed for each file.
fn decrypt(dir: &Path, client: &str, files: &[PathBuf]) -> Vec<String> {
    let o = common::decrypt_retrying(
        dir,
        client,
        "t",
        &["--message-bits", "1"],
        files,
        Duration::from_secs(120),
    );
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "decrypt failed: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    files
        .iter()
        .map(|f| {
            let p = format!("{}: ", f.display());
            out.lines()
                .find_map(|l| l.strip_prefix(&p).map(str::to_string))
                .unwrap_or_else(|| format!("missing in {out}"))
        })
        .collect()
}

/// Insecure dealer material for an imported key (`coterie_threshold::service::material_for_import`
/// at the paper's parameters, the secure public key's 1,024 samples of 45 bits): per bundle 2351
/// triples and 72 bits; the public key 46,080 bits; the key 1024 input masks (of every owner, so
/// of the holder).
fn deal(dir: &Path, stores: &str, bundles: usize) {
    let p = coterie_threshold::Params::paper();
    let (triples, bits, randoms, masks) =
        coterie_threshold::service::material_for_import(&p, bundles, 1024, 45).unwrap();
    assert_eq!((bits, masks), (72 * bundles + 46_080, 1024));
    run(&[
        "spdz",
        "deal-insecure",
        "--parties",
        "4",
        "--out",
        &dir.join(stores).to_string_lossy(),
        "--triples",
        &triples.to_string(),
        "--bits",
        &bits.to_string(),
        "--randoms",
        &randoms.to_string(),
        "--masks",
        &masks.to_string(),
    ]);
}

#[test]
fn a_tfhe_rs_key_is_imported_by_one_node_and_tfhe_rs_ciphertexts_decrypt_through_the_cli() {
    let dir = coterie_base::fsio::unique_temp_dir("coterie-thr-import");
    std::fs::create_dir_all(&dir).unwrap();
    // Below Linux's ephemeral range (32768–60999), apart from the other process tests' ranges.
    let base = 10000 + (std::process::id() % 500) * 20;
    let client = format!("127.0.0.1:{}", base + 10);
    common::threshold_pki(&dir, 4, base, "t");

    // TFHE-rs: a binary key of dimension 1024 and encryptions of known bits (native modulus,
    // mu << 63, noise std 2^-40), as files in both bincode encodings.
    let mut boxed = tc::new_seeder();
    let seeder = boxed.as_mut();
    let mut secret = tc::SecretRandomGenerator::<tc::DefaultRandomGenerator>::new(seeder.seed());
    let mut enc =
        tc::EncryptionRandomGenerator::<tc::DefaultRandomGenerator>::new(seeder.seed(), seeder);
    let key: tc::LweSecretKeyOwned<u64> =
        tc::LweSecretKey::generate_new_binary(tc::LweDimension(1024), &mut secret);
    let noise = tc::Gaussian::from_dispersion_parameter(tc::StandardDev(2f64.powi(-40)), 0.0);
    let cm = tc::CiphertextModulus::<u64>::new_native();
    let msgs = [1u64, 0, 1, 1, 0, 1];
    let mut files = Vec::new();
    let mut tfhe_rs_says = Vec::new();
    for (i, &mu) in msgs.iter().enumerate() {
        let ct = tc::allocate_and_encrypt_new_lwe_ciphertext(
            &key,
            tc::Plaintext(mu << 63),
            noise,
            cm,
            &mut enc,
        );
        let phase = tc::decrypt_lwe_ciphertext(&key, &ct).0;
        tfhe_rs_says.push(phase.wrapping_add(1 << 62) >> 63);
        let bytes = if i % 2 == 0 {
            bincode::serialize(&ct.versionize()).unwrap()
        } else {
            bincode::serialize(&ct).unwrap()
        };
        let f = dir.join(format!("tfhe-rs-{i}.ct"));
        std::fs::write(&f, bytes).unwrap();
        files.push(f);
    }
    assert_eq!(tfhe_rs_says, msgs, "TFHE-rs decrypts its own ciphertexts");
    let key_bincode = dir.join("lwe-key.bincode");
    std::fs::write(&key_bincode, bincode::serialize(&key).unwrap()).unwrap();
    let key_safe = dir.join("lwe-key.safe");
    let mut safe = Vec::new();
    tfhe::safe_serialization::safe_serialize(&key, &mut safe, 1 << 24).unwrap();
    std::fs::write(&key_safe, safe).unwrap();
    // unusable keys: dimension 512, and a coefficient 2
    let short: tc::LweSecretKeyOwned<u64> =
        tc::LweSecretKey::generate_new_binary(tc::LweDimension(512), &mut secret);
    let key_short = dir.join("lwe-key-512.bincode");
    std::fs::write(&key_short, bincode::serialize(&short).unwrap()).unwrap();
    let mut words = key.as_ref().to_vec();
    words[5] = 2;
    let key_ternary = dir.join("lwe-key-2.bincode");
    let non_binary = tc::LweSecretKey::from_container(words);
    std::fs::write(&key_ternary, bincode::serialize(&non_binary).unwrap()).unwrap();

    deal(&dir, "stores", 12);
    let stores = dir.join("stores");
    let holder_key = stores.join(format!("party-{HOLDER}/threshold-key.bin"));

    // 1. unusable key files are refused at every node, before anything is sent
    for (f, says) in [
        (&key_short, "dimension 512"),
        (&key_ternary, "other than 0 and 1"),
    ] {
        let nodes = start(&dir, &stores, &client, Some(f), "bad");
        let logs = finish(&dir, nodes, "bad");
        let (ok, log) = &logs[HOLDER];
        assert!(
            !ok && log.contains("--import-key") && log.contains(says),
            "{log}"
        );
        assert!(log.contains("WARNING"), "{log}");
        for (i, (ok, log)) in logs.iter().enumerate() {
            assert!(!ok, "node {i} must refuse: {log}");
            assert!(
                log.contains(&format!("party {HOLDER}")) || log.contains(&format!("peer {HOLDER}")),
                "node {i} should name party {HOLDER}: {log}"
            );
        }
        assert!(!holder_key.exists(), "no key written");
    }

    // 2. node 2 imports the key (TFHE-rs bincode); the TFHE-rs ciphertexts decrypt
    let nodes = start(&dir, &stores, &client, Some(&key_bincode), "a");
    let got = decrypt(&dir, &client, &files);
    let want: Vec<String> = tfhe_rs_says.iter().map(u64::to_string).collect();
    assert_eq!(
        got, want,
        "coterie decrypt prints exactly the encrypted bits"
    );
    let logs = finish(&dir, nodes, "a");
    for (i, (ok, log)) in logs.iter().enumerate() {
        assert!(ok, "node {i} should stop cleanly: {log}");
        assert!(log.contains("key imported from party 2"), "node {i}: {log}");
    }
    let warn = &logs[HOLDER].1;
    assert!(
        warn.contains("WARNING") && warn.contains("can still decrypt") && warn.contains("Destroy"),
        "{warn}"
    );
    assert!(!logs[0].1.contains("WARNING"), "only the holder is warned");
    assert!(holder_key.exists() && stores.join("party-0/public-key.bin").exists());

    // 3. a restart with --import-key when the key exists is refused; without it, the key loads
    let key_file = std::fs::read(&holder_key).unwrap();
    let logs = finish(
        &dir,
        start(&dir, &stores, &client, Some(&key_bincode), "b"),
        "b",
    );
    assert!(logs.iter().all(|(ok, _)| !ok), "{logs:?}");
    assert!(
        logs[HOLDER].1.contains("already has a key"),
        "{}",
        logs[HOLDER].1
    );
    assert_eq!(
        std::fs::read(&holder_key).unwrap(),
        key_file,
        "never replaced"
    );
    let nodes = start(&dir, &stores, &client, None, "c");
    let got = decrypt(&dir, &client, &files[..2]);
    assert_eq!(got, want[..2], "after a restart");
    let logs = finish(&dir, nodes, "c");
    assert!(logs.iter().all(|(ok, _)| *ok), "{logs:?}");

    // 4. a second service imports the same key from its safe-serialized file
    deal(&dir, "stores2", 4);
    let nodes = start(&dir, &dir.join("stores2"), &client, Some(&key_safe), "s");
    let got = decrypt(&dir, &client, &files[2..4]);
    assert_eq!(got, want[2..4], "key from safe_serialize");
    let logs = finish(&dir, nodes, "s");
    assert!(logs.iter().all(|(ok, _)| *ok), "{logs:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
