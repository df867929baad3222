//! Generation of a local CA, per-party keys and certificates, and a ready party config
//! (what `coterie certs` writes). For test and local use; production parties bring their own.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

use crate::config::{CONFIG_VERSION, ConfigFile, PartyEntry, party_name};
use crate::{Error, PartyId, Result};

/// PEM key and certificate of one party, or of the CA.
#[derive(Debug, Clone)]
pub struct PemPair {
    /// PEM certificate.
    pub cert_pem: String,
    /// PEM private key (PKCS#8).
    pub key_pem: String,
}

/// A CA and the certificates it issued to parties `0..n`.
#[derive(Debug, Clone)]
pub struct Pki {
    /// The CA.
    pub ca: PemPair,
    /// Party `i`'s key and certificate (for `party-i.coterie`).
    pub parties: Vec<PemPair>,
}

fn tls_err(e: rcgen::Error) -> Error {
    Error::Tls(e.to_string())
}

/// Creates a CA and certificates for `n` parties.
pub fn generate_pki(n: usize) -> Result<Pki> {
    let ca_key = KeyPair::generate().map_err(tls_err)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "coterie local CA");
    let ca_cert = ca_params.self_signed(&ca_key).map_err(tls_err)?;
    let ca = PemPair {
        cert_pem: ca_cert.pem(),
        key_pem: ca_key.serialize_pem(),
    };
    let issuer = Issuer::new(ca_params, ca_key);
    let parties = (0..n)
        .map(|i| issue(&issuer, i))
        .collect::<Result<Vec<_>>>()?;
    Ok(Pki { ca, parties })
}

fn issue(issuer: &Issuer<'_, KeyPair>, id: PartyId) -> Result<PemPair> {
    let key = KeyPair::generate().map_err(tls_err)?;
    let mut params = CertificateParams::new(vec![party_name(id)]).map_err(tls_err)?;
    params
        .distinguished_name
        .push(DnType::CommonName, party_name(id));
    let cert = params.signed_by(&key, issuer).map_err(tls_err)?;
    Ok(PemPair {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// A self-signed certificate for `party-<id>.coterie` that no config knows (for tests of refusal).
pub fn generate_stranger(id: PartyId) -> Result<PemPair> {
    let key = KeyPair::generate().map_err(tls_err)?;
    let params = CertificateParams::new(vec![party_name(id)]).map_err(tls_err)?;
    let cert = params.self_signed(&key).map_err(tls_err)?;
    Ok(PemPair {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::Config(format!("{}: {e}", path.display())))
}

/// Writes `pki` into `dir` (`ca.crt`, `ca.key`, `party<i>.crt`, `party<i>.key`) and a party config
/// `party.toml` listing `addresses[i]` for party `i`, with both the CA and the pinned certificates.
/// Returns the config's path.
pub fn write_pki(dir: &Path, pki: &Pki, addresses: &[String]) -> Result<PathBuf> {
    if addresses.len() != pki.parties.len() {
        return Err(Error::Config("one address per party needed".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::Config(format!("{}: {e}", dir.display())))?;
    write(&dir.join("ca.crt"), &pki.ca.cert_pem)?;
    write(&dir.join("ca.key"), &pki.ca.key_pem)?;
    let mut parties = Vec::new();
    for (i, p) in pki.parties.iter().enumerate() {
        let c = format!("party{i}.crt");
        let k = format!("party{i}.key");
        write(&dir.join(&c), &p.cert_pem)?;
        write(&dir.join(&k), &p.key_pem)?;
        parties.push(PartyEntry {
            id: i,
            address: addresses[i].clone(),
            listen: None,
            cert: Some(c.into()),
            key: Some(k.into()),
        });
    }
    let cf = ConfigFile {
        version: CONFIG_VERSION,
        ca: Some("ca.crt".into()),
        parties,
    };
    let path = dir.join("party.toml");
    write(&path, &cf.to_toml()?)?;
    Ok(path)
}

/// Loopback addresses `127.0.0.1:<base_port + i>` for `n` parties.
pub fn loopback_addresses(n: usize, base_port: u16) -> Vec<String> {
    (0..n)
        .map(|i| format!("127.0.0.1:{}", base_port as usize + i))
        .collect()
}

/// Loopback addresses on ports the OS reports free right now (bound and released; a small race
/// remains if something else grabs them in between).
pub fn free_loopback_addresses(n: usize) -> Result<Vec<String>> {
    let ls = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::Config(format!("no free port: {e}")))?;
    ls.iter()
        .map(|l| {
            l.local_addr()
                .map(|a| a.to_string())
                .map_err(|e| Error::Config(e.to_string()))
        })
        .collect()
}
