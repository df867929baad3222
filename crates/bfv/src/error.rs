//! The error type of coterie-bfv.

/// Everything that can go wrong in coterie-bfv. Operations on well-formed values of one context
/// never fail; errors come from parameters, from operands of different contexts or levels, from
/// missing keys and from malformed encodings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An error of the underlying ring arithmetic.
    #[error(transparent)]
    Math(#[from] coterie_math::Error),
    /// A parameter is outside what the scheme supports.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Operands belong to different parameter sets, degrees or levels.
    #[error("operand mismatch: {0}")]
    Mismatch(String),
    /// An encoding has the wrong version, size, degree, modulus or level, or unreduced values.
    #[error("malformed input: {0}")]
    Malformed(String),
    /// The operation needs something these parameters do not offer (e.g. batching when
    /// `t ≢ 1 mod 2N`, or a modulus switch at the last level).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An envelope or file error of coterie-base (wrong magic, tag or version, too large,
    /// truncated or trailing bytes, I/O), as its message.
    #[error("{0}")]
    Base(String),
    /// A required evaluation key (a Galois element) is missing.
    #[error("missing key: {0}")]
    MissingKey(String),
    /// A share or partial result of a multi-party step (a partial decryption, a re-encryption
    /// share, a re-encryption key share) is missing, repeated, or belongs to another ciphertext
    /// or key; the message names the user or proxy.
    #[error("share: {0}")]
    Share(String),
    /// A party flow failed ([`crate::reenc_party`]): the network (a peer crashed, timed out or
    /// aborted), a peer's message, a stored state file, or the final check; the message names
    /// the party and the step.
    #[error("protocol: {0}")]
    Protocol(String),
}

impl From<coterie_base::Error> for Error {
    fn from(e: coterie_base::Error) -> Self {
        // coterie-base's error holds an io::Error (neither Clone nor Eq); keep its message.
        Error::Base(e.to_string())
    }
}

/// Result alias for coterie-bfv.
pub type Result<T> = core::result::Result<T, Error>;
