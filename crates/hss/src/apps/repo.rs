//! The public repository of spec §6.1: a directory where the servers publish the public key and
//! clients upload their ciphertexts, one file per client and computation. Anyone may read it
//! (ciphertexts and the public key are public); every file is a coterie envelope written
//! atomically and durably, and read with a size bound and validated against the public key, so a
//! malformed upload is refused with an error naming the file, never a panic.
//!
//! Layout: `DIR/pk.hss` (the public key) and `DIR/<topic>/<client>.hss` (one [`Upload`]). Topic
//! and client names are 1 to 64 characters from `[a-z0-9_-]`.
//!
//! ```
//! use coterie_hss::apps::repo::Repository;
//! use coterie_hss::scheme::{Params, insecure_keygen_trusted_dealer};
//! use coterie_math::bigint::BigInt;
//! use rand::SeedableRng;
//! let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1); // insecure fixed seed
//! let (pk, _, _, _) = insecure_keygen_trusted_dealer(&Params::insecure_toy(4, 16, 10), &mut rng).unwrap();
//! let dir = coterie_base::fsio::unique_temp_dir("hss-repo-doc");
//! let repo = Repository::create(&dir).unwrap();
//! repo.publish_key(&pk).unwrap();
//! let ct = pk.encryptor().unwrap().encrypt(&pk, &BigInt::from(1), &mut rng);
//! repo.upload("vote-1", "alice", &[ct.clone()]).unwrap();
//! let pk2 = repo.public_key().unwrap();
//! assert_eq!(repo.clients("vote-1").unwrap(), vec!["alice".to_string()]);
//! assert_eq!(repo.fetch("vote-1", "alice", &pk2, 1).unwrap(), vec![ct]);
//! assert!(repo.upload("vote-1", "../evil", &[]).is_err());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::path::{Path, PathBuf};

use coterie_base::fsio;
use serde::{Deserialize, Serialize};

use crate::scheme::{self, L1Input, PublicKey};
use crate::{Error, Result};

/// Largest file read from the repository (an upload of many 160-digit inputs stays far below).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Largest number of inputs in one upload.
pub const MAX_INPUTS_PER_UPLOAD: usize = 4096;

/// One client's ciphertexts for one computation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upload {
    /// The client's name (as in the file name).
    pub client: String,
    /// Its level-1 inputs, in the order the program expects them.
    pub inputs: Vec<L1Input>,
}

// Stored in the coterie envelope as `HSup` (a client's upload to the public repository).
coterie_base::versioned! {
    Upload => b"HSup" v 1,
}

/// A public repository in a directory (see the module docs).
#[derive(Debug, Clone)]
pub struct Repository {
    dir: PathBuf,
}

/// Checks a topic or client name: 1 to 64 characters from `[a-z0-9_-]`.
pub fn check_name(kind: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidParameter(format!(
            "{kind} name {name:?}: use 1 to 64 characters from a-z, 0-9, '_' and '-'"
        )))
    }
}

impl Repository {
    /// Creates the directory if needed and opens it.
    pub fn create(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::InvalidParameter(format!("cannot create repository {}: {e}", dir.display()))
        })?;
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    /// Opens an existing repository directory.
    pub fn open(dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            return Err(Error::InvalidParameter(format!(
                "no repository at {}",
                dir.display()
            )));
        }
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn key_path(&self) -> PathBuf {
        self.dir.join("pk.hss")
    }

    /// Publishes the servers' public key.
    pub fn publish_key(&self, pk: &PublicKey) -> Result<()> {
        fsio::write_atomic(&self.key_path(), &scheme::to_bytes(pk)?)?;
        Ok(())
    }

    /// The published public key, validated.
    pub fn public_key(&self) -> Result<PublicKey> {
        let path = self.key_path();
        let bytes = fsio::read_bounded(&path, MAX_FILE_BYTES)?;
        let pk: PublicKey = scheme::from_bytes(&bytes)
            .map_err(|e| Error::Malformed(format!("{}: {e}", path.display())))?;
        pk.validate()?;
        Ok(pk)
    }

    /// Writes `client`'s inputs for `topic` (replacing an earlier upload of the same client).
    pub fn upload(&self, topic: &str, client: &str, inputs: &[L1Input]) -> Result<PathBuf> {
        check_name("topic", topic)?;
        check_name("client", client)?;
        if inputs.len() > MAX_INPUTS_PER_UPLOAD {
            return Err(Error::InvalidParameter(format!(
                "at most {MAX_INPUTS_PER_UPLOAD} inputs per upload"
            )));
        }
        let dir = self.dir.join(topic);
        std::fs::create_dir_all(&dir).map_err(|e| {
            Error::InvalidParameter(format!("cannot create {}: {e}", dir.display()))
        })?;
        let up = Upload {
            client: client.to_string(),
            inputs: inputs.to_vec(),
        };
        let path = dir.join(format!("{client}.hss"));
        fsio::write_atomic(&path, &scheme::to_bytes(&up)?)?;
        Ok(path)
    }

    /// The clients that uploaded to `topic`, sorted by name (files that are not uploads are
    /// ignored).
    pub fn clients(&self, topic: &str) -> Result<Vec<String>> {
        check_name("topic", topic)?;
        let dir = self.dir.join(topic);
        let rd = std::fs::read_dir(&dir).map_err(|e| {
            Error::InvalidParameter(format!("no uploads for {topic} ({}: {e})", dir.display()))
        })?;
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                let stem = name.strip_suffix(".hss")?.to_string();
                check_name("client", &stem).ok().map(|()| stem)
            })
            .collect();
        names.sort();
        Ok(names)
    }

    /// `client`'s inputs for `topic`, checked against `pk` and to hold exactly `expect` inputs.
    pub fn fetch(
        &self,
        topic: &str,
        client: &str,
        pk: &PublicKey,
        expect: usize,
    ) -> Result<Vec<L1Input>> {
        check_name("topic", topic)?;
        check_name("client", client)?;
        let path = self.dir.join(topic).join(format!("{client}.hss"));
        let bytes = fsio::read_bounded(&path, MAX_FILE_BYTES)?;
        let bad = |e: String| Error::Malformed(format!("{}: {e}", path.display()));
        let up: Upload = scheme::from_bytes(&bytes).map_err(|e| bad(e.to_string()))?;
        if up.client != client {
            return Err(bad(format!("upload names client {:?}", up.client)));
        }
        if up.inputs.len() != expect {
            return Err(bad(format!(
                "{} inputs where {expect} are expected",
                up.inputs.len()
            )));
        }
        for i in &up.inputs {
            i.validate(pk).map_err(|e| bad(e.to_string()))?;
        }
        Ok(up.inputs)
    }
}
