//! `coterie demo ...`: a protocol with all parties on this machine, as real party processes
//! (`coterie party ...`) over mutual TLS on loopback; `demo math` runs locally.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Subcommand;
use coterie_net::certs;

/// `coterie demo ...`.
#[derive(Subcommand)]
pub enum Demo {
    /// Local math demo (no network).
    Math {
        /// log2 of the ring dimension.
        #[arg(long, default_value_t = 12)]
        n: u32,
    },
    /// `echo` with N party processes over TLS on loopback.
    Echo {
        /// Number of parties.
        #[arg(long, default_value_t = 3)]
        parties: usize,
    },
    /// Threshold decryption among N party processes over TLS (paper parameters n = 1024,
    /// q = 2^64, p = 2); the SPDZ_2k material comes from the INSECURE dealer (demo only) or,
    /// with `--prep ot`, from maliciously secure OT preprocessing among the party processes.
    Threshold {
        /// Number of parties.
        #[arg(long, default_value_t = 4)]
        parties: usize,
        /// Number of ciphertexts.
        #[arg(long, default_value_t = 8)]
        count: usize,
        /// Source of the SPDZ_2k material.
        #[arg(long, value_enum, default_value = "insecure-dealer")]
        prep: PrepArg,
    },
    /// SPDZ_2k among N party processes over TLS: OT-based preprocessing into per-party stores,
    /// then a MAC-checked product of every party's input.
    Spdz {
        /// Number of parties.
        #[arg(long, default_value_t = 3)]
        parties: usize,
        /// Lanes of the preprocessing (`spdz-prep-ot --lanes`, whose default is also 3).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=16))]
        lanes: u32,
    },
    /// Multi-key TFHE (AKÖ, seed 003) among K party processes over TLS: joint key generation
    /// (the smallest Table 3 set for K parties), an 8-bit comparison on inputs of parties 0 and
    /// 1, joint decryption.
    Mktfhe {
        /// Number of parties.
        #[arg(long, default_value_t = 2)]
        parties: usize,
        /// Party 0's input.
        #[arg(long, default_value_t = 200)]
        x: u8,
        /// Party 1's input.
        #[arg(long, default_value_t = 77)]
        y: u8,
        /// Use the INSECURE toy parameter set (n = 32, N = 512; no security) for a fast run.
        #[arg(long)]
        insecure_toy: bool,
        /// Also decrypt by MPC rounding (coterie-threshold, no smudging noise), with OT-based
        /// SPDZ_2k preprocessing made for it.
        #[arg(long)]
        mpc_rounding: bool,
    },
    /// Multi-key BFV with threshold proxy re-encryption (seed 001): USERS users, PROXIES proxies,
    /// a computing server and a receiver as processes over mutual TLS; key generation with
    /// ReKeyGen, each user's encrypted input, a depth-5 circuit mixing all users' keys,
    /// threshold decryption, re-encryption to the receiver; both results checked.
    Reenc {
        /// Number of users (2 to 8).
        #[arg(long, default_value_t = 4)]
        users: usize,
        /// Number of proxies.
        #[arg(long, default_value_t = 2)]
        proxies: usize,
        /// Use INSECURE toy parameters (n = 1024; no security) for a fast run.
        #[arg(long)]
        insecure_toy: bool,
    },
    /// MatriGear (seed 002) among N party processes over TLS: distributed key generation, the
    /// proven MAC key, one batch of d×d matrix triples with authenticated shares (and the random
    /// values the inputs need) into per-party stores; then two secret-shared matrices multiplied
    /// by one matrix triple, MAC-checked and compared with the plaintext product by every party.
    Matrigear {
        /// Number of parties.
        #[arg(long, default_value_t = 2)]
        parties: usize,
        /// Parameter set (default Params II, 128-bit).
        #[arg(long, value_enum, default_value = "ii")]
        set: super::matrigear::SetArg,
        /// Bits of p (128 … 4096).
        #[arg(long, default_value_t = 128)]
        log_p: u32,
        /// Matrix dimension d.
        #[arg(long, default_value_t = 4)]
        d: usize,
    },
    /// HSS vote (seed 004 §6.1): two servers run the distributed setup (key and 100 pads), N
    /// voters upload encrypted random votes to the public repository (one process each), the
    /// servers evaluate the majority each alone, the output client combines and checks it.
    HssVote {
        /// Number of voters.
        #[arg(long, default_value_t = 15)]
        clients: u32,
        /// Evaluation mode.
        #[arg(long, value_enum, default_value = "padded")]
        mode: super::hss::ModeArg,
        /// Make both servers report their first evaluation as failed (INSECURE test knob), to
        /// show the re-run.
        #[arg(long)]
        inject_failure: bool,
        /// INSECURE toy group (no security) for a fast run.
        #[arg(long)]
        insecure_toy: bool,
    },
    /// HSS private RSS feed (seed 004 §6.3): setup, a subscriber's encrypted interest tags, the
    /// servers' digests of public records, parsed and checked against the plaintext filter.
    HssFeed {
        /// Number of tags.
        #[arg(long, default_value_t = 16)]
        tags: usize,
        /// Number of records in the digest.
        #[arg(long, default_value_t = 32)]
        records: usize,
        /// INSECURE toy group (no security) for a fast run.
        #[arg(long)]
        insecure_toy: bool,
    },
    /// HSS two-server PIR with boolean queries (seed 004 §6.4): setup, a client's encrypted
    /// query over a public database, both servers' syndrome answers decoded and checked.
    HssPir {
        /// Records in the public database.
        #[arg(long, default_value_t = 200)]
        records: usize,
        /// INSECURE toy group (no security) for a fast run.
        #[arg(long)]
        insecure_toy: bool,
    },
    /// HSS correlated randomness (seed 004 §6.5): two processes run the distributed key
    /// generation and make Beaver triples over Z_(2^n) from bilinear-form correlations, then
    /// open them to check a·b = c (the opening is for the demo only).
    HssTriples {
        /// Ring size n (≤ 128).
        #[arg(long, default_value_t = 32)]
        n_bits: u32,
        /// Number of triples.
        #[arg(long, default_value_t = 2)]
        count: usize,
        /// INSECURE toy group (no security) for a fast run.
        #[arg(long)]
        insecure_toy: bool,
    },
    /// HSS policy-based file system (seed 004 §6.2): the data owner's keys and one file under a
    /// hidden policy; a client whose attributes satisfy it opens the file, one whose attributes
    /// do not is denied (two servers and the client as processes).
    HssFs {
        /// INSECURE toy group (no security) for a fast run.
        #[arg(long)]
        insecure_toy: bool,
    },
    /// `sum` with N party processes over TLS on loopback.
    Sum {
        /// Number of parties.
        #[arg(long, default_value_t = 3)]
        parties: usize,
        /// Number of rounds.
        #[arg(long, default_value_t = 3)]
        rounds: u32,
    },
}

/// Where `demo threshold` gets its SPDZ_2k material.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrepArg {
    /// INSECURE trusted dealer: one process makes every party's material (demo only).
    InsecureDealer,
    /// OT-based preprocessing among the party processes (`spdz-prep-ot`; maliciously secure
    /// with abort).
    Ot,
}

/// Runs `coterie demo ...`.
pub fn run(which: Demo) -> Result<(), String> {
    match which {
        Demo::Math { n } => super::math::run(n),
        Demo::Echo { parties } => demo(parties, &["echo"]),
        Demo::Sum { parties, rounds } => demo(parties, &["sum", "--rounds", &rounds.to_string()]),
        Demo::Spdz { parties, lanes } => demo_spdz(parties, lanes),
        Demo::Reenc {
            users,
            proxies,
            insecure_toy,
        } => super::reenc::demo(users, proxies, insecure_toy),
        Demo::Threshold {
            parties,
            count,
            prep,
        } => demo_threshold(parties, count, prep),
        Demo::HssVote {
            clients,
            mode,
            inject_failure,
            insecure_toy,
        } => super::hss::demo_vote(clients, mode, inject_failure, insecure_toy),
        Demo::HssFeed {
            tags,
            records,
            insecure_toy,
        } => super::hss::demo_feed(tags, records, insecure_toy),
        Demo::HssPir {
            records,
            insecure_toy,
        } => super::hss::demo_pir(records, insecure_toy),
        Demo::HssFs { insecure_toy } => super::hss::demo_fs(insecure_toy),
        Demo::HssTriples {
            n_bits,
            count,
            insecure_toy,
        } => super::hss::demo_triples(n_bits, count, insecure_toy),
        Demo::Matrigear {
            parties,
            set,
            log_p,
            d,
        } => super::matrigear::demo(parties, set, log_p, d),
        Demo::Mktfhe {
            parties,
            x,
            y,
            insecure_toy,
            mpc_rounding,
        } => {
            let (xs, ys) = (x.to_string(), y.to_string());
            let mut args = vec!["mktfhe", "--x", &xs, "--y", &ys];
            if insecure_toy {
                println!("INSECURE toy parameters (no security): a fast protocol run only");
                args.push("--insecure-toy");
            }
            if mpc_rounding {
                args.push("--mpc-rounding");
            }
            demo(parties, &args)
        }
    }
}

/// `demo threshold`: SPDZ_2k material into per-party stores (by the insecure dealer, or by OT
/// preprocessing among the party processes), then the decryption demo.
fn demo_threshold(parties: usize, count: usize, prep: PrepArg) -> Result<(), String> {
    if parties < 2 {
        return Err("need at least 2 parties".into());
    }
    if count == 0 {
        return Err("need at least 1 ciphertext".into());
    }
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo-threshold");
    let stores = dir.join("stores");
    let res = coterie_threshold::demo::demo_counts(count)
        .map_err(|e| e.to_string())
        .and_then(|c| match prep {
            PrepArg::InsecureDealer => {
                println!(
                    "INSECURE dealer: one process makes every party's SPDZ_2k material \
                     ({} triples, {} bits, {} randoms per party) — demo only",
                    c.triples, c.bits, c.randoms
                );
                super::spdz::insecure_deal(&stores, parties, c)
            }
            PrepArg::Ot => threshold_prep_ot(&dir.join("prep"), &stores, parties, c),
        })
        .and_then(|()| {
            demo_in(
                &dir.join("run"),
                parties,
                &[
                    "threshold-demo",
                    "--dir",
                    &stores.to_string_lossy(),
                    "--count",
                    &count.to_string(),
                ],
            )
        });
    let _ = std::fs::remove_dir_all(&dir);
    res
}

/// `demo threshold --prep ot`: one `spdz-prep-ot` process per party makes exactly `c` into the
/// stores under `stores`; prints the wall time and the triple rate.
fn threshold_prep_ot(
    dir: &Path,
    stores: &Path,
    parties: usize,
    c: coterie_spdz::Counts,
) -> Result<(), String> {
    println!(
        "maliciously secure OT preprocessing (SPDZ_2k, coterie_spdz::OtPrep) among the {parties} \
         party processes: {} triples, {} bits, {} randoms per party",
        c.triples, c.bits, c.randoms
    );
    let config = write_config(dir, &vec![coterie_net::Role::Node; parties])?;
    let t = Instant::now();
    run_processes(
        &config,
        parties,
        &[
            "spdz-prep-ot",
            "--dir",
            &stores.to_string_lossy(),
            "--triples",
            &c.triples.to_string(),
            "--bits",
            &c.bits.to_string(),
            "--randoms",
            &c.randoms.to_string(),
            "--masks",
            &c.masks_per_party.to_string(),
        ],
        600,
    )?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "OT preprocessing (maliciously secure) took {secs:.1} s wall time for {parties} parties: \
         {} triples ({:.0} triples/s, with the bits and randoms; process start and TLS set-up \
         included)",
        c.triples,
        c.triples as f64 / secs.max(1e-9)
    );
    Ok(())
}

/// `demo spdz`: OT preprocessing (on `lanes` lanes), then the online product, in one scratch
/// directory.
fn demo_spdz(parties: usize, lanes: u32) -> Result<(), String> {
    if parties < 2 {
        return Err("need at least 2 parties".into());
    }
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo-spdz");
    let stores = dir.join("stores");
    let stores_s = stores.to_string_lossy().to_string();
    let res = demo_in(
        &dir.join("prep"),
        parties,
        &[
            "spdz-prep-ot",
            "--dir",
            &stores_s,
            "--triples",
            &parties.to_string(),
            "--bits",
            "0",
            "--randoms",
            "1",
            "--masks",
            "1",
            "--lanes",
            &lanes.to_string(),
        ],
    )
    .and_then(|()| {
        demo_in(
            &dir.join("online"),
            parties,
            &["spdz-demo", "--dir", &stores_s],
        )
    });
    let _ = std::fs::remove_dir_all(&dir);
    res
}

/// Starts `parties` party processes over TLS on loopback and prints their results.
fn demo(parties: usize, protocol: &[&str]) -> Result<(), String> {
    if parties < 2 {
        return Err("need at least 2 parties".into());
    }
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo");
    let res = demo_in(&dir, parties, protocol);
    let _ = std::fs::remove_dir_all(&dir);
    res
}

fn demo_in(dir: &Path, parties: usize, protocol: &[&str]) -> Result<(), String> {
    let config = write_config(dir, &vec![coterie_net::Role::Node; parties])?;
    run_processes(&config, parties, protocol, 90)
}

/// Writes a fresh PKI and a loopback party config with one party per entry of `roles` (all
/// [`coterie_net::Role::Node`] for a mesh of equals) under `dir`; returns the config's path.
pub fn write_config(dir: &Path, roles: &[coterie_net::Role]) -> Result<std::path::PathBuf, String> {
    let parties = roles.len();
    let pki = certs::generate_pki(parties).map_err(|e| e.to_string())?;
    let addrs = certs::free_loopback_addresses(parties).map_err(|e| e.to_string())?;
    let named: Vec<coterie_net::Role> = if roles.iter().all(|r| *r == coterie_net::Role::Node) {
        Vec::new()
    } else {
        roles.to_vec()
    };
    let config =
        certs::write_pki_with_roles(dir, &pki, &addrs, &named).map_err(|e| e.to_string())?;
    println!(
        "{} parties over mutual TLS on loopback; config {}",
        parties,
        config.display()
    );
    Ok(config)
}

/// Starts `parties` processes of `coterie party --config CONFIG --id I PROTOCOL...`, waits for
/// them (at most `limit_s` seconds; then they are killed), prints their output, and fails naming
/// the parties that failed.
pub fn run_processes(
    config: &Path,
    parties: usize,
    protocol: &[&str],
    limit_s: u64,
) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let timeout = if limit_s > 90 { "600" } else { "20" };
    let mut children = Vec::new();
    for i in 0..parties {
        let child = Command::new(&exe)
            .arg("party")
            .arg("--config")
            .arg(config)
            .args([
                "--id",
                &i.to_string(),
                "--timeout-s",
                timeout,
                "--connect-s",
                "30",
            ])
            .args(protocol)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start party {i}: {e}"))?;
        children.push(child);
    }
    let deadline = Instant::now() + Duration::from_secs(limit_s);
    let mut failed = Vec::new();
    for (i, mut c) in children.into_iter().enumerate() {
        loop {
            match c.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = c.kill();
                    break;
                }
            }
        }
        let out = c.wait_with_output().map_err(|e| e.to_string())?;
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            failed.push(i);
        }
    }
    if failed.is_empty() {
        println!("all {parties} parties succeeded");
        Ok(())
    } else {
        Err(format!("parties {failed:?} failed"))
    }
}
