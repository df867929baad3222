//! `coterie party ... reenc` and `coterie demo reenc`: multi-key BFV with threshold proxy
//! re-encryption (seed 001) as processes. The flow is `coterie_bfv::reenc_party`; this wires it
//! to a mesh, picks each party's role from the config's roles, and prints.

use std::path::{Path, PathBuf};

use coterie_base::{Progress, ProgressEvent};
use coterie_bfv::mk::Smudging;
use coterie_bfv::reenc_party::{self, Config, Layout, ParamChoice, Report};
use coterie_net::{Mesh, TlsMesh};

/// The steps of `coterie party ... reenc`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// CRS coin toss, every user's keys (public parts to the server): writes state.
    Keygen,
    /// ReKeyGen: masking keys from the receiver, re-encryption key shares to the proxies.
    Rekeygen,
    /// Encryption of the users' (public demo) inputs and the depth-5 circuit at the server,
    /// which stores the result.
    Evaluate,
    /// Threshold decryption of the server's result to the first user, who checks it.
    Decrypt,
    /// Re-encryption of the server's result by the proxies to the receiver, who checks it.
    Reencrypt,
}

/// Arguments of `coterie party ... reenc`.
#[derive(clap::Args, Clone, Debug)]
pub struct ReencArgs {
    /// Which step to run (every party runs the same step).
    #[arg(long, value_enum)]
    step: Step,
    /// Base directory of the parties' state (this party's is DIR/party-<id>).
    #[arg(long)]
    dir: PathBuf,
    /// Use INSECURE toy parameters (n = 1024; no security) for a fast run.
    #[arg(long)]
    insecure_toy: bool,
    /// Public label the demo inputs are derived from (every party must use the same).
    #[arg(long, default_value = "coterie demo reenc")]
    inputs: String,
    /// Testing: a proxy exits abruptly (as if killed) once it holds the ciphertext to
    /// re-encrypt, before it sends its share.
    #[arg(long, hide = true)]
    crash_mid_reenc: bool,
}

fn input_seed(label: &str) -> [u8; 32] {
    *blake3::Hasher::new_derive_key("coterie demo reenc inputs/v1")
        .update(label.as_bytes())
        .finalize()
        .as_bytes()
}

/// Runs one step of the seed 001 flow at this party of `mesh`.
pub async fn party(mesh: &mut TlsMesh, a: &ReencArgs) -> Result<String, String> {
    let (me, n) = (mesh.id(), mesh.n());
    let roles: Vec<coterie_net::Role> = (0..n).map(|i| mesh.role(i).clone()).collect();
    let layout = Layout::from_net_roles(&roles).map_err(|e| format!("config roles: {e}"))?;
    let params = if a.insecure_toy {
        ParamChoice::InsecureToy
    } else {
        ParamChoice::Seed001
    };
    let cfg = Config {
        layout,
        params,
        smudging: Smudging::PaperSigma20,
        dir: a.dir.join(format!("party-{me}")),
    };
    let role = cfg.layout.role(me).map_err(|e| e.to_string())?;
    let progress = if a.crash_mid_reenc {
        Progress::new(move |e: &ProgressEvent| {
            if let ProgressEvent::Advance { label, done: 1, .. } = e
                && label == "re-encryption"
            {
                eprintln!("party {me}: crashing on purpose in the middle of ReEnc");
                std::process::exit(3);
            }
        })
    } else {
        crate::progress::progress_bar(&format!("party {me}"))
    };
    let seed = input_seed(&a.inputs);
    let r = match a.step {
        Step::Keygen => reenc_party::keygen(mesh, &cfg, &progress).await,
        Step::Rekeygen => reenc_party::rekeygen(mesh, &cfg, &progress).await,
        Step::Evaluate => reenc_party::evaluate(mesh, &cfg, &seed, &progress).await,
        Step::Decrypt => reenc_party::decrypt(mesh, &cfg, &seed, &progress).await,
        Step::Reencrypt => reenc_party::reencrypt(mesh, &cfg, &seed, &progress).await,
    }
    .map_err(|e| e.to_string())?;
    print_report(me, &r);
    Ok(format!("{:?} {:?} done", role, a.step))
}

fn print_report(me: usize, r: &Report) {
    for p in &r.phases {
        if p.sent + p.received > 0 {
            println!(
                "party {me} ({}): {}: {:.1} ms, sent {} B in {} messages, received {} B",
                r.role, p.phase, p.ms, p.sent, p.msgs_sent, p.received
            );
        } else {
            println!("party {me} ({}): {}: {:.1} ms", r.role, p.phase, p.ms);
        }
    }
    for w in &r.wrote {
        println!("party {me} ({}): wrote {}", r.role, w.display());
    }
    for c in &r.checked {
        println!("party {me} ({}): {c}", r.role);
    }
}

/// `coterie demo reenc`: `users` users, `proxies` proxies, a server and a receiver as processes
/// over mutual TLS on loopback; the five steps one after the other; both results checked.
pub fn demo(users: usize, proxies: usize, insecure_toy: bool) -> Result<(), String> {
    let layout = Layout::standard(users, proxies).map_err(|e| e.to_string())?;
    let mut roles = vec![coterie_net::Role::User; users];
    roles.extend(vec![coterie_net::Role::Proxy; proxies]);
    roles.push(coterie_net::Role::Server);
    roles.push(coterie_net::Role::Receiver);
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo-reenc");
    let res = demo_in(&dir, &roles, insecure_toy);
    let _ = std::fs::remove_dir_all(&dir);
    res?;
    println!(
        "multi-key BFV with threshold re-encryption: {} users, {} proxies: both results correct",
        layout.users(),
        layout.proxies()
    );
    Ok(())
}

fn demo_in(dir: &Path, roles: &[coterie_net::Role], insecure_toy: bool) -> Result<(), String> {
    let config = super::demo::write_config(&dir.join("pki"), roles)?;
    if insecure_toy {
        println!("INSECURE toy parameters (n = 1024, no security): a fast protocol run only");
    } else {
        println!("seed 001's parameters: n = 8192, log q = 220, t = 256, Table 2's gadget");
    }
    let state = dir.join("state");
    let state_s = state.to_string_lossy().to_string();
    for step in ["keygen", "rekeygen", "evaluate", "decrypt", "reencrypt"] {
        println!("--- step {step}");
        let mut args = vec!["reenc", "--step", step, "--dir", &state_s];
        if insecure_toy {
            args.push("--insecure-toy");
        }
        super::demo::run_processes(&config, roles.len(), &args, 900)?;
    }
    Ok(())
}
