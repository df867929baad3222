//! `coterie decrypt` and `coterie threshold-encrypt`: the threshold decryption service's client
//! side (`coterie_threshold::client`).

use std::path::{Path, PathBuf};

/// Arguments of `coterie decrypt`.
#[derive(clap::Args)]
pub struct DecryptArgs {
    /// Party config of the nodes (for the CA and node 0's certificate name).
    #[arg(long)]
    config: PathBuf,
    /// Address of node 0's client listener.
    #[arg(long)]
    node: String,
    /// Client certificate (PEM), from `coterie certs-client`.
    #[arg(long)]
    cert: PathBuf,
    /// Client private key (PEM).
    #[arg(long)]
    key: PathBuf,
    /// Ciphertext files.
    files: Vec<PathBuf>,
}

/// `coterie decrypt`: one line `file: message` (or `file: error: ...`) per file; fails if any
/// file was not decrypted.
pub fn decrypt(a: DecryptArgs) -> Result<(), String> {
    let rt = super::runtime()?;
    let res = rt
        .block_on(coterie_threshold::client::client_decrypt(
            &a.config, &a.node, &a.cert, &a.key, &a.files,
        ))
        .map_err(|e| e.to_string())?;
    let mut failed = 0;
    for (f, r) in res {
        match r {
            Ok(mu) => println!("{}: {mu}", f.display()),
            Err(e) => {
                failed += 1;
                println!("{}: error: {e}", f.display())
            }
        }
    }
    if failed > 0 {
        Err(format!("{failed} ciphertexts not decrypted"))
    } else {
        Ok(())
    }
}

/// `coterie threshold-encrypt`.
pub fn threshold_encrypt(public_key: &Path, message: u64, out: &Path) -> Result<(), String> {
    coterie_threshold::client::encrypt_file(public_key, message, out).map_err(|e| e.to_string())
}
