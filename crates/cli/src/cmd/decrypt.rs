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
    /// Message bits `m` of TFHE-rs ciphertext files: the message is read from the top `m` bits
    /// of the phase, a padding bit counted inside (1: one bit encoded as `μ·2^63`, as for
    /// `coterie threshold-encrypt`). TFHE-rs does not store it; CTLW files carry their own.
    #[arg(long, default_value_t = 1)]
    message_bits: u32,
    /// Ciphertext files, recognised by their contents: coterie's CTLW format, or a TFHE-rs 1.8
    /// `core_crypto::LweCiphertext<Vec<u64>>` serialized with bincode (`ct.versionize()` or `ct`;
    /// modulus 2^64 or 2^k), which is converted to CTLW before it is sent. A TFHE-rs file that
    /// does not convert is reported (`file: error: not sent: ...`) and not sent.
    files: Vec<PathBuf>,
}

/// `coterie decrypt`: one line `file: message` (or `file: error: ...`) per file; fails if any
/// file was not decrypted.
pub fn decrypt(a: DecryptArgs) -> Result<(), String> {
    let rt = super::runtime()?;
    let res = rt
        .block_on(coterie_threshold::client::client_decrypt(
            &a.config,
            &a.node,
            &a.cert,
            &a.key,
            &a.files,
            a.message_bits,
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
