//! The error type of the infrastructure helpers.

use std::path::PathBuf;

/// What went wrong in an envelope, a file operation or a bit-packed buffer. Crates wrap it in
/// their own error enum (`#[from]`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file operation failed.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done (`"write"`, `"rename"`, `"read"`, ...).
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An input is larger than the caller allows; nothing of that size was allocated.
    #[error("{what} is {len} bytes, over the limit of {max}")]
    TooLarge {
        /// What was too large.
        what: String,
        /// Its length in bytes.
        len: u64,
        /// The limit in bytes.
        max: u64,
    },
    /// An envelope is malformed: wrong magic, tag or version, truncated, trailing bytes, or a
    /// payload that does not decode.
    #[error("envelope: {0}")]
    Envelope(String),
    /// A bit-packed buffer is too short or its widths are out of range.
    #[error("bit packing: {0}")]
    Bits(String),
    /// A durable counter file ([`crate::fsio::write_counter`]) holds no valid slot.
    #[error("corrupt counter {}", path.display())]
    CorruptCounter {
        /// The file.
        path: PathBuf,
    },
}

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
