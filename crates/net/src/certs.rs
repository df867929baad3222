//! Generation of a local CA, per-party keys and certificates, a ready party config (what
//! `coterie certs` writes), and client certificates issued by the same CA (what `coterie
//! certs-client` writes) for [`crate::channel`]s. For test and local use; production parties bring
//! their own. Files are written atomically and durably, private keys with mode 0o600.
//!
//! ```
//! use coterie_net::Role;
//! use coterie_net::certs::{generate_pki, issue_client_cert, loopback_addresses, write_pki_with_roles};
//! let dir = coterie_base::fsio::unique_temp_dir("coterie-certs-doc");
//! let pki = generate_pki(3).unwrap();
//! let roles = [Role::Server, Role::Server, Role::Receiver];
//! let config = write_pki_with_roles(&dir, &pki, &loopback_addresses(3, 47000), &roles).unwrap();
//! let roster = coterie_net::Roster::load(&config).unwrap();
//! assert_eq!(roster.parties_with_role(&Role::Server), vec![0, 1]);
//! let (crt, key) = issue_client_cert(&dir, "alice").unwrap();
//! assert!(crt.ends_with("client-alice.crt") && key.ends_with("client-alice.key"));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

use crate::config::{CONFIG_VERSION, ConfigFile, PartyEntry, party_name};
use crate::role::Role;
use crate::{Error, PartyId, Result};

/// Largest PEM file (CA certificate or key) read when issuing client certificates.
const MAX_PEM_BYTES: u64 = 1 << 16;

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

impl Pki {
    /// Issues a client certificate for [`client_name`]`(name)` with this CA ([`issue_client`]).
    pub fn issue_client(&self, name: &str) -> Result<PemPair> {
        issue_client(&self.ca, name)
    }
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
    coterie_base::fsio::write_atomic(path, text.as_bytes())
        .map_err(|e| Error::Config(e.to_string()))
}

fn write_private(path: &Path, text: &str) -> Result<()> {
    coterie_base::fsio::write_atomic_private(path, text.as_bytes())
        .map_err(|e| Error::Config(e.to_string()))
}

/// Writes `pki` into `dir` (`ca.crt`, `ca.key`, `party<i>.crt`, `party<i>.key`) and a party config
/// `party.toml` listing `addresses[i]` for party `i`, with both the CA and the pinned certificates,
/// every party an equal ([`Role::Node`]). Returns the config's path.
pub fn write_pki(dir: &Path, pki: &Pki, addresses: &[String]) -> Result<PathBuf> {
    write_pki_with_roles(dir, pki, addresses, &[])
}

/// [`write_pki`] with a role per party: `roles[i]` is written as party `i`'s `role` (parties past
/// the end of `roles`, and [`Role::Node`]s, get no `role` line, so `&[]` writes the config of a
/// mesh of equals). Keys are written with mode 0o600.
pub fn write_pki_with_roles(
    dir: &Path,
    pki: &Pki,
    addresses: &[String],
    roles: &[Role],
) -> Result<PathBuf> {
    if addresses.len() != pki.parties.len() {
        return Err(Error::Config("one address per party needed".into()));
    }
    if roles.len() > pki.parties.len() {
        return Err(Error::Config(format!(
            "{} roles for {} parties",
            roles.len(),
            pki.parties.len()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::Config(format!("{}: {e}", dir.display())))?;
    write(&dir.join("ca.crt"), &pki.ca.cert_pem)?;
    write_private(&dir.join("ca.key"), &pki.ca.key_pem)?;
    let mut parties = Vec::new();
    for (i, p) in pki.parties.iter().enumerate() {
        let c = format!("party{i}.crt");
        let k = format!("party{i}.key");
        write(&dir.join(&c), &p.cert_pem)?;
        write_private(&dir.join(&k), &p.key_pem)?;
        parties.push(PartyEntry {
            id: i,
            address: addresses[i].clone(),
            listen: None,
            cert: Some(c.into()),
            key: Some(k.into()),
            role: roles.get(i).filter(|r| **r != Role::Node).cloned(),
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

/// The DNS name of client `name`'s certificate: `client-<name>.coterie`.
pub fn client_name(name: &str) -> String {
    format!("client-{name}.coterie")
}

fn check_client_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name.len() > 48
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return Err(Error::Config(
            "client name: 1 to 48 letters, digits and '-' only".into(),
        ));
    }
    Ok(())
}

/// Issues a client certificate for [`client_name`]`(name)` with the CA `ca` (PEM certificate and
/// key), in memory.
pub fn issue_client(ca: &PemPair, name: &str) -> Result<PemPair> {
    check_client_name(name)?;
    let ca_key = KeyPair::from_pem(&ca.key_pem).map_err(tls_err)?;
    let issuer = Issuer::from_ca_cert_pem(&ca.cert_pem, ca_key).map_err(tls_err)?;
    let key = KeyPair::generate().map_err(tls_err)?;
    let dns = client_name(name);
    let mut params = CertificateParams::new(vec![dns.clone()]).map_err(tls_err)?;
    params.distinguished_name.push(DnType::CommonName, dns);
    let cert = params.signed_by(&key, &issuer).map_err(tls_err)?;
    Ok(PemPair {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// Issues a client certificate for [`client_name`]`(name)` with the CA in `dir` (`ca.crt`,
/// `ca.key`, as [`write_pki`] writes them) and writes `client-<name>.crt` and `client-<name>.key`
/// (mode 0o600) there; returns their paths. This is `coterie certs-client`.
pub fn issue_client_cert(dir: &Path, name: &str) -> Result<(PathBuf, PathBuf)> {
    check_client_name(name)?;
    let read = |f: &str| -> Result<String> {
        let p = dir.join(f);
        let b = coterie_base::fsio::read_bounded(&p, MAX_PEM_BYTES)
            .map_err(|e| Error::Config(e.to_string()))?;
        String::from_utf8(b).map_err(|_| Error::Config(format!("{}: not PEM text", p.display())))
    };
    let ca = PemPair {
        cert_pem: read("ca.crt")?,
        key_pem: read("ca.key")?,
    };
    let pair = issue_client(&ca, name)?;
    let c = dir.join(format!("client-{name}.crt"));
    let k = dir.join(format!("client-{name}.key"));
    write(&c, &pair.cert_pem)?;
    write_private(&k, &pair.key_pem)?;
    Ok((c, k))
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
