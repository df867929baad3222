//! `coterie party ... matrigear-prep`, `coterie party ... matrigear-product` and
//! `coterie demo matrigear`: MatriGear's HE-based SPDZ preprocessing over F_p (seed 002) as
//! processes. The flows are `coterie_matrigear::flows`; this parses, wires them to the mesh and
//! prints.

use std::path::{Path, PathBuf};

use coterie_bfv::params::MatriGearSet;
use coterie_matrigear::flows::{self, ParamChoice, PrepArgs};
use coterie_net::{Mesh, TlsMesh};

/// The parameter sets selectable on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetArg {
    /// Table 2's Params I (N = 2^14, log q = 426, b ≈ 2^64; 118-bit).
    I,
    /// Table 2's Params II (N = 2^13, log q = 230, b ≈ 2^16; 128-bit).
    Ii,
    /// INSECURE Toy-B (N = 32, p = 132^4 + 1; no security): tests and quick demos only.
    InsecureToyB,
}

/// Parameters shared by the MatriGear subcommands.
#[derive(clap::Args, Clone, Debug)]
pub struct MatrigearParams {
    /// Base directory of the parties' state and stores (this party's is DIR/party-<id>).
    #[arg(long)]
    dir: PathBuf,
    /// Parameter set.
    #[arg(long, value_enum, default_value = "ii")]
    set: SetArg,
    /// Bits of the prime p (128, 256, …, 4096; ignored for the toy set).
    #[arg(long, default_value_t = 128)]
    log_p: u32,
    /// Matrix dimension d (must divide the slot count D).
    #[arg(long, default_value_t = 4)]
    d: usize,
}

impl MatrigearParams {
    fn choice(&self) -> ParamChoice {
        match self.set {
            SetArg::I => ParamChoice::MatriGear {
                set: MatriGearSet::I,
                log_p: self.log_p,
            },
            SetArg::Ii => ParamChoice::MatriGear {
                set: MatriGearSet::II,
                log_p: self.log_p,
            },
            SetArg::InsecureToyB => ParamChoice::InsecureToyB,
        }
    }
    fn party_dir(&self, id: usize) -> PathBuf {
        self.dir.join(format!("party-{id}"))
    }
}

/// Arguments of `coterie party ... matrigear-prep`.
#[derive(clap::Args, Clone, Debug)]
pub struct PrepCmd {
    #[command(flatten)]
    params: MatrigearParams,
    /// Scalar triples to add to the store.
    #[arg(long, default_value_t = 0)]
    triples: usize,
    /// Random authenticated values to add to the store.
    #[arg(long, default_value_t = 0)]
    randoms: usize,
    /// d×d matrix triples to add to the store.
    #[arg(long, default_value_t = 1)]
    matrix_triples: usize,
}

/// Arguments of `coterie party ... matrigear-product`.
#[derive(clap::Args, Clone, Debug)]
pub struct ProductCmd {
    #[command(flatten)]
    params: MatrigearParams,
}

/// `coterie party ... matrigear-prep`.
pub async fn prep(mesh: &mut TlsMesh, a: &PrepCmd) -> Result<String, String> {
    let id = mesh.id();
    if a.params.set == SetArg::InsecureToyB {
        println!("party {id}: INSECURE toy parameters (no security): a protocol run only");
    }
    let args = PrepArgs {
        params: a.params.choice(),
        d: a.params.d,
        triples: a.triples,
        randoms: a.randoms,
        matrix_triples: a.matrix_triples,
    };
    let progress = crate::progress::progress_bar(&format!("party {id}"));
    let r = flows::prep(mesh, &a.params.party_dir(id), &args, &progress)
        .await
        .map_err(|e| e.to_string())?;
    if r.setup {
        println!(
            "party {id}: keys (passively secure distributed key generation) and MAC key (proven, \
             Diag) in {:.2} s, {} bytes sent",
            r.setup_secs, r.setup_bytes
        );
    } else {
        println!("party {id}: keys and MAC key loaded from the state file");
    }
    println!(
        "party {id}: produced in {:.2} s, {} bytes sent; store holds {} triples, {} randoms, {} \
         {d}x{d} matrix triples",
        r.prep_secs,
        r.prep_bytes,
        r.available.0,
        r.available.1,
        r.available.2,
        d = a.params.d
    );
    Ok("MatriGear preprocessing done".into())
}

/// `coterie party ... matrigear-product`.
pub async fn product(mesh: &mut TlsMesh, a: &ProductCmd) -> Result<String, String> {
    let id = mesh.id();
    let d = a.params.d;
    let c = flows::product(mesh, &a.params.party_dir(id), a.params.choice(), d)
        .await
        .map_err(|e| e.to_string())?;
    let show: Vec<String> = c.iter().take(2).map(|x| x.to_string()).collect();
    println!(
        "party {id}: A·B of two secret-shared {d}x{d} matrices by one matrix triple, opened and \
         MAC-checked, equals the plaintext product (first entries {})",
        show.join(", ")
    );
    Ok("MatriGear matrix product done".into())
}

/// `coterie demo matrigear`: preprocessing (keys, MAC key, matrix triples and the random values
/// the inputs need) into per-party stores, then the online product, as processes.
pub fn demo(parties: usize, set: SetArg, log_p: u32, d: usize) -> Result<(), String> {
    if parties < 2 {
        return Err("need at least 2 parties".into());
    }
    if set == SetArg::InsecureToyB {
        println!("INSECURE toy parameters (no security): a fast protocol run only");
    }
    let dir = coterie_base::fsio::unique_temp_dir("coterie-demo-matrigear");
    let res = run_demo(&dir, parties, set, log_p, d);
    let _ = std::fs::remove_dir_all(&dir);
    res
}

fn run_demo(dir: &Path, parties: usize, set: SetArg, log_p: u32, d: usize) -> Result<(), String> {
    let stores = dir.join("stores").to_string_lossy().to_string();
    let set_s = match set {
        SetArg::I => "i",
        SetArg::Ii => "ii",
        SetArg::InsecureToyB => "insecure-toy-b",
    };
    let (log_p_s, d_s, randoms) = (log_p.to_string(), d.to_string(), (2 * d * d).to_string());
    let common = [
        "--dir", &stores, "--set", set_s, "--log-p", &log_p_s, "--d", &d_s,
    ];
    let roles = vec![coterie_net::Role::Node; parties];
    let config = super::demo::write_config(&dir.join("net"), &roles)?;
    let mut prep = vec!["matrigear-prep"];
    prep.extend(common);
    prep.extend(["--matrix-triples", "1", "--randoms", &randoms]);
    super::demo::run_processes(&config, parties, &prep, 600)?;
    let mut online = vec!["matrigear-product"];
    online.extend(common);
    super::demo::run_processes(&config, parties, &online, 120)
}
