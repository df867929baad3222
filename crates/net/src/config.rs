//! Party configuration: the TOML file every party holds, listing every party's id, address and
//! certificate (or a CA that signed them all).
//!
//! ```toml
//! version = 1
//! ca = "ca.crt"                  # optional: accept certificates this CA issued for `party-<id>.coterie`
//!
//! [[party]]
//! id = 0
//! address = "127.0.0.1:47000"    # where the others dial this party
//! listen = "127.0.0.1:47000"     # optional: where this party listens (default: address)
//! cert = "party0.crt"            # optional if `ca` is set: pins this party's exact certificate
//! key = "party0.key"             # optional: this party's private key (only read by party 0 itself)
//! role = "server"                # optional: what this party is for (default "node"; see [`Role`])
//! ```
//!
//! Relative paths are resolved against the directory of the config file. A config without roles
//! is a full mesh of equals, as before roles existed.
//!
//! ```
//! use coterie_net::config::ConfigFile;
//! use coterie_net::{Role, Roster};
//! let text = r#"
//! version = 1
//! [[party]]
//! id = 0
//! address = "127.0.0.1:47000"
//! cert = "party0.crt"
//! role = "proxy"
//! [[party]]
//! id = 1
//! address = "127.0.0.1:47001"
//! cert = "party1.crt"
//! "#;
//! let cf = ConfigFile::parse(text).unwrap();
//! assert_eq!(cf.parties[0].role, Some(Role::Proxy));
//! assert_eq!(cf.parties[1].role, None); // a node
//! ```

use std::path::{Path, PathBuf};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::{Deserialize, Serialize};

use crate::role::{Role, parties_with_role, role_of};
use crate::{Error, PartyId, Result};

/// Config file format version understood by this build.
pub const CONFIG_VERSION: u32 = 1;

/// Largest party config file read (1 MiB).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The DNS name a party's certificate must carry when it is authorized through the CA.
pub fn party_name(id: PartyId) -> String {
    format!("party-{id}.coterie")
}

/// The party id in a name made by [`party_name`], if it is one.
pub fn parse_party_name(name: &str) -> Option<PartyId> {
    name.strip_prefix("party-")?
        .strip_suffix(".coterie")?
        .parse()
        .ok()
}

/// One `[[party]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartyEntry {
    /// Party id, `0..n`.
    pub id: PartyId,
    /// `host:port` the other parties dial.
    pub address: String,
    /// `host:port` to listen on, if different from `address` (e.g. behind a relay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    /// PEM certificate of this party (pinned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<PathBuf>,
    /// PEM private key of this party (read only by the party itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<PathBuf>,
    /// What this party is for; absent means [`Role::Node`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

/// The TOML party configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Format version, must be [`CONFIG_VERSION`].
    pub version: u32,
    /// PEM certificate of a CA that signs party certificates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<PathBuf>,
    /// Every party.
    #[serde(rename = "party")]
    pub parties: Vec<PartyEntry>,
}

/// A validated configuration with certificates loaded: what [`crate::TlsMesh::connect`] needs.
#[derive(Debug, Clone)]
pub struct Roster {
    /// Dial address of each party, by id.
    pub addresses: Vec<String>,
    /// Listen address of each party, by id.
    pub listen: Vec<String>,
    /// Pinned certificate of each party, where given.
    pub certs: Vec<Option<CertificateDer<'static>>>,
    /// CA certificate, where given.
    pub ca: Option<CertificateDer<'static>>,
    /// Key file of each party, where given (resolved path).
    pub keys: Vec<Option<PathBuf>>,
    /// Role of each party, by id; a party past the end of the list (all of them, when it is
    /// empty) is a [`Role::Node`].
    pub roles: Vec<Role>,
}

impl ConfigFile {
    /// Parses TOML text.
    pub fn parse(text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| Error::Config(e.to_string()))
    }

    /// Reads and parses a config file (at most [`MAX_CONFIG_BYTES`]).
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = coterie_base::fsio::read_bounded(path, MAX_CONFIG_BYTES)
            .map_err(|e| Error::Config(e.to_string()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::Config(format!("{}: not UTF-8", path.display())))?;
        Self::parse(&text)
    }

    /// Serializes to TOML text.
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string_pretty(self).map_err(|e| Error::Config(e.to_string()))
    }
}

fn resolve(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// Reads one PEM certificate.
pub fn load_cert(path: &Path) -> Result<CertificateDer<'static>> {
    CertificateDer::from_pem_file(path)
        .map_err(|e| Error::Config(format!("certificate {}: {e}", path.display())))
}

/// Reads a PEM certificate chain (the party's certificate first).
pub fn load_cert_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let it = CertificateDer::pem_file_iter(path)
        .map_err(|e| Error::Config(format!("certificate {}: {e}", path.display())))?;
    let v: std::result::Result<Vec<_>, _> = it.collect();
    let v = v.map_err(|e| Error::Config(format!("certificate {}: {e}", path.display())))?;
    if v.is_empty() {
        return Err(Error::Config(format!(
            "no certificate in {}",
            path.display()
        )));
    }
    Ok(v)
}

/// Reads a PEM private key.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_file(path)
        .map_err(|e| Error::Config(format!("private key {}: {e}", path.display())))
}

impl Roster {
    /// Number of parties.
    pub fn n(&self) -> usize {
        self.addresses.len()
    }

    /// The role of party `id` ([`Role::Node`] where the config gives none).
    pub fn role(&self, id: PartyId) -> &Role {
        role_of(&self.roles, id)
    }

    /// The parties whose role is `role`, in id order.
    ///
    /// ```
    /// # use coterie_net::{Role, Roster};
    /// let roster = Roster {
    ///     addresses: vec!["a:1".into(), "b:1".into(), "c:1".into()],
    ///     listen: vec!["a:1".into(), "b:1".into(), "c:1".into()],
    ///     certs: vec![None; 3],
    ///     ca: None,
    ///     keys: vec![None; 3],
    ///     roles: vec![Role::Server, Role::Client, Role::Server],
    /// };
    /// assert_eq!(roster.parties_with_role(&Role::Server), vec![0, 2]);
    /// assert_eq!(roster.role(1), &Role::Client);
    /// ```
    pub fn parties_with_role(&self, role: &Role) -> Vec<PartyId> {
        parties_with_role(&self.roles, self.n(), role)
    }

    /// Loads and validates a config file (ids exactly `0..n`, each party authorizable).
    pub fn load(path: &Path) -> Result<Self> {
        let base = path.parent().unwrap_or(Path::new("."));
        Self::from_file(&ConfigFile::load(path)?, base)
    }

    /// Validates a parsed config, resolving relative paths against `base`.
    pub fn from_file(cf: &ConfigFile, base: &Path) -> Result<Self> {
        if cf.version != CONFIG_VERSION {
            return Err(Error::Config(format!(
                "config version {} (this build reads {CONFIG_VERSION})",
                cf.version
            )));
        }
        let n = cf.parties.len();
        if n < 2 {
            return Err(Error::Config(format!("need at least 2 parties, found {n}")));
        }
        let mut entries: Vec<Option<&PartyEntry>> = vec![None; n];
        for p in &cf.parties {
            let slot = entries
                .get_mut(p.id)
                .ok_or_else(|| Error::Config(format!("party id {} out of range 0..{n}", p.id)))?;
            if slot.is_some() {
                return Err(Error::Config(format!("party id {} listed twice", p.id)));
            }
            *slot = Some(p);
        }
        let ca = cf
            .ca
            .as_ref()
            .map(|p| load_cert(&resolve(base, p)))
            .transpose()?;
        let mut r = Roster {
            addresses: Vec::with_capacity(n),
            listen: Vec::with_capacity(n),
            certs: Vec::with_capacity(n),
            ca,
            keys: Vec::with_capacity(n),
            roles: Vec::with_capacity(n),
        };
        for (id, e) in entries.into_iter().enumerate() {
            let e = e.ok_or_else(|| Error::Config(format!("party {id} missing")))?;
            if e.cert.is_none() && r.ca.is_none() {
                return Err(Error::Config(format!(
                    "party {id} has no certificate and the config has no CA"
                )));
            }
            r.addresses.push(e.address.clone());
            r.listen
                .push(e.listen.clone().unwrap_or_else(|| e.address.clone()));
            r.certs.push(
                e.cert
                    .as_ref()
                    .map(|p| load_cert(&resolve(base, p)))
                    .transpose()?,
            );
            r.keys.push(e.key.as_ref().map(|p| resolve(base, p)));
            r.roles.push(e.role.clone().unwrap_or_default());
        }
        Ok(r)
    }

    /// Digest binding the party set: n, each pinned certificate, the CA, and the roles where any
    /// party has one other than [`Role::Node`] (so configs without roles keep their digest).
    /// Parties whose digests differ refuse to talk (they hold different configs).
    pub fn digest(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new_derive_key("coterie-net 2025 party roster v1");
        h.update(&(self.n() as u64).to_le_bytes());
        for c in &self.certs {
            match c {
                Some(c) => {
                    h.update(&[1]);
                    h.update(&(c.len() as u64).to_le_bytes());
                    h.update(c);
                }
                None => {
                    h.update(&[0]);
                }
            }
        }
        if let Some(ca) = &self.ca {
            h.update(&(ca.len() as u64).to_le_bytes());
            h.update(ca);
        }
        if (0..self.n()).any(|i| *self.role(i) != Role::Node) {
            h.update(b"roles");
            for i in 0..self.n() {
                let r = self.role(i).as_str();
                h.update(&(r.len() as u64).to_le_bytes());
                h.update(r.as_bytes());
            }
        }
        *h.finalize().as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_enter_the_digest_only_when_present() {
        let mut r = Roster {
            addresses: vec!["a:1".into(), "b:1".into()],
            listen: vec!["a:1".into(), "b:1".into()],
            certs: vec![None; 2],
            ca: None,
            keys: vec![None; 2],
            roles: Vec::new(),
        };
        let plain = r.digest();
        r.roles = vec![Role::Node, Role::Node];
        assert_eq!(r.digest(), plain, "explicit nodes are the default");
        assert_eq!(r.parties_with_role(&Role::Node), vec![0, 1]);
        r.roles = vec![Role::Server, Role::Client];
        let roled = r.digest();
        assert_ne!(roled, plain);
        r.roles = vec![Role::Client, Role::Server];
        assert_ne!(r.digest(), roled);
        assert_eq!(r.parties_with_role(&Role::Server), vec![1]);
    }

    #[test]
    fn parse_and_reject() {
        let ok = "version = 1\n[[party]]\nid = 0\naddress = \"a:1\"\ncert = \"x\"\n[[party]]\nid = 1\naddress = \"b:1\"\ncert = \"y\"\n";
        let cf = ConfigFile::parse(ok).unwrap();
        assert_eq!(cf.parties.len(), 2);
        assert_eq!(ConfigFile::parse(&cf.to_toml().unwrap()).unwrap(), cf);
        // unknown field, missing id, duplicate id, no cert and no CA
        assert!(
            ConfigFile::parse("version = 1\nbogus = 2\n[[party]]\nid=0\naddress=\"a\"\n").is_err()
        );
        let dup = ConfigFile::parse(
            "version = 1\n[[party]]\nid=0\naddress=\"a\"\n[[party]]\nid=0\naddress=\"b\"\n",
        )
        .unwrap();
        assert!(matches!(
            Roster::from_file(&dup, Path::new(".")),
            Err(Error::Config(_))
        ));
        let nocert = ConfigFile::parse(
            "version = 1\n[[party]]\nid=0\naddress=\"a\"\n[[party]]\nid=1\naddress=\"b\"\n",
        )
        .unwrap();
        assert!(matches!(
            Roster::from_file(&nocert, Path::new(".")),
            Err(Error::Config(_))
        ));
        // roles: optional, default node; an unknown role name is a custom role, a bad one an error
        let roled = "version = 1\n[[party]]\nid = 0\naddress = \"a:1\"\ncert = \"x\"\nrole = \"proxy\"\n[[party]]\nid = 1\naddress = \"b:1\"\ncert = \"y\"\nrole = \"key-holder\"\n";
        let rf = ConfigFile::parse(roled).unwrap();
        assert_eq!(rf.parties[0].role, Some(Role::Proxy));
        assert_eq!(rf.parties[1].role, Some(Role::Custom("key-holder".into())));
        assert_eq!(ConfigFile::parse(&rf.to_toml().unwrap()).unwrap(), rf);
        assert!(ConfigFile::parse(&roled.replace("proxy", "Bad Role")).is_err());
        assert!(!cf.to_toml().unwrap().contains("role"));
        let badver = ConfigFile { version: 9, ..cf };
        assert!(matches!(
            Roster::from_file(&badver, Path::new(".")),
            Err(Error::Config(_))
        ));
    }
}
