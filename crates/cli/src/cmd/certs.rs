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
}

/// `coterie certs`.
pub fn certs(a: CertsArgs) -> Result<(), String> {
    if a.parties < 2 {
        return Err("need at least 2 parties".into());
    }
    let pki = certs::generate_pki(a.parties).map_err(|e| e.to_string())?;
    let path = certs::write_pki(
        &a.out,
        &pki,
        &certs::loopback_addresses(a.parties, a.base_port),
    )
    .map_err(|e| e.to_string())?;
    println!(
        "wrote CA, {} party keys and certificates, and {}",
        a.parties,
        path.display()
    );
    Ok(())
}

/// `coterie certs-client`.
pub fn certs_client(dir: &Path, name: &str) -> Result<(), String> {
    let (c, k) = issue_client_cert(dir, name)?;
    println!("wrote {} and {}", c.display(), k.display());
    Ok(())
}

/// Issues a client certificate `client-<name>.coterie` with the CA in `dir` (`ca.crt`,
/// `ca.key`, as written by `coterie certs`); writes `client-<name>.crt/.key` (the key owner-only).
// TODO(lead): replace with coterie-net's client certificate issuing (`coterie_net::certs`) once
// the net helper's branch lands; this is the CLI's code of today, unchanged but for the writes.
fn issue_client_cert(dir: &Path, name: &str) -> Result<(PathBuf, PathBuf), String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err("client name: letters, digits and '-' only".into());
    }
    let ca_pem = std::fs::read_to_string(dir.join("ca.crt")).map_err(|e| e.to_string())?;
    let ca_key = std::fs::read_to_string(dir.join("ca.key")).map_err(|e| e.to_string())?;
    let ca_key = rcgen::KeyPair::from_pem(&ca_key).map_err(|e| e.to_string())?;
    let issuer = rcgen::Issuer::from_ca_cert_pem(&ca_pem, ca_key).map_err(|e| e.to_string())?;
    let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let dns = format!("client-{name}.coterie");
    let mut params = rcgen::CertificateParams::new(vec![dns.clone()]).map_err(|e| e.to_string())?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, dns);
    let cert = params.signed_by(&key, &issuer).map_err(|e| e.to_string())?;
    let c = dir.join(format!("client-{name}.crt"));
    let k = dir.join(format!("client-{name}.key"));
    coterie_base::fsio::write_atomic(&c, cert.pem().as_bytes()).map_err(|e| e.to_string())?;
    coterie_base::fsio::write_atomic_private(&k, key.serialize_pem().as_bytes())
        .map_err(|e| e.to_string())?;
    Ok((c, k))
}
