//! `coterie certs` (a CA, party keys and certificates, a party config) and `coterie
//! certs-client` (a client certificate for the threshold decryption service).

use std::path::{Path, PathBuf};

use coterie_net::certs;

/// Arguments of `coterie certs`.
#[derive(clap::Args)]
pub struct CertsArgs {
    /// Number of parties.
    #[arg(long)]
    parties: usize,
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
    /// Port of party 0; party i listens on base-port + i.
    #[arg(long, default_value_t = 47000)]
    base_port: u16,
    /// Roles of parties 0, 1, ... as a comma-separated list (e.g. `node,node,client`); parties
    /// past the list's end are equal nodes. Default: every party an equal node.
    #[arg(long)]
    roles: Option<String>,
}

/// `coterie certs`.
pub fn certs(a: CertsArgs) -> Result<(), String> {
    if a.parties < 2 {
        return Err("need at least 2 parties".into());
    }
    let roles = match &a.roles {
        Some(list) => coterie_net::role::parse_roles(list).map_err(|e| format!("--roles: {e}"))?,
        None => Vec::new(),
    };
    let pki = certs::generate_pki(a.parties).map_err(|e| e.to_string())?;
    let path = certs::write_pki_with_roles(
        &a.out,
        &pki,
        &certs::loopback_addresses(a.parties, a.base_port),
        &roles,
    )
    .map_err(|e| e.to_string())?;
    println!(
        "wrote CA, {} party keys and certificates, and {}",
        a.parties,
        path.display()
    );
    Ok(())
}

/// `coterie certs-client`: a client certificate `client-<name>.coterie` issued with the CA in
/// `dir` (`coterie_net::certs::issue_client_cert`).
pub fn certs_client(dir: &Path, name: &str) -> Result<(), String> {
    let (c, k) = certs::issue_client_cert(dir, name).map_err(|e| e.to_string())?;
    println!("wrote {} and {}", c.display(), k.display());
    Ok(())
}
