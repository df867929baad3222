//! The one error type of coterie-spdz.

use coterie_net::PartyId;

/// Result alias of coterie-spdz.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the arithmetic black box. Protocol aborts name the check that
/// failed and the party concerned (the cheater where it can be identified, else the party that
/// detected the failure).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The network layer failed (timeout, peer abort, malformed frame, ...).
    #[error("network: {0}")]
    Net(#[from] coterie_net::Error),
    /// A MAC check failed: the opened values are not authentic. The cheater cannot be identified
    /// (the check is on a sum), so `detected_by` is the party that observed the failure.
    #[error("MAC check {check:?} failed (detected by party {detected_by})")]
    MacCheckFailed {
        /// Name of the failed check.
        check: &'static str,
        /// The party that detected it.
        detected_by: PartyId,
    },
    /// A party's commitment did not open to the value it revealed.
    #[error("commitment of party {party} in check {check:?} does not open")]
    CommitmentMismatch {
        /// Name of the check.
        check: &'static str,
        /// The party whose opening failed.
        party: PartyId,
    },
    /// A party sent different values to different parties where a broadcast was required.
    #[error("broadcast consistency check {check:?} failed: party {party} saw other values")]
    InconsistentBroadcast {
        /// Name of the check.
        check: &'static str,
        /// A party whose view differs.
        party: PartyId,
    },
    /// A triple failed the sacrifice check in preprocessing.
    #[error("triple sacrifice check failed (detected by party {detected_by})")]
    SacrificeFailed {
        /// The party that detected it.
        detected_by: PartyId,
    },
    /// A preprocessing check (OT consistency, authentication) failed.
    #[error("preprocessing check {check:?} failed (party {party})")]
    PrepCheckFailed {
        /// Name of the check.
        check: &'static str,
        /// The party concerned.
        party: PartyId,
    },
    /// A message from `party` does not have the expected shape or holds an out-of-range element.
    #[error("malformed message from party {party}: {cause}")]
    Malformed {
        /// The sender.
        party: PartyId,
        /// What is wrong.
        cause: String,
    },
    /// Preprocessing material of `kind` ran out.
    #[error("preprocessing exhausted: {kind} (wanted {wanted}, {available} left)")]
    Exhausted {
        /// Kind of material.
        kind: String,
        /// How many were asked for.
        wanted: u64,
        /// How many were left.
        available: u64,
    },
    /// Material opened for a test does not hold (see [`crate::verify`]).
    #[error("material check: {kind} item {item}: {what} fails")]
    MaterialCheck {
        /// The kind of material.
        kind: String,
        /// The index of the first bad item.
        item: usize,
        /// The relation that fails.
        what: &'static str,
    },
    /// Invalid arguments or parameters.
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// The operation is not defined over this ring (e.g. truncated opening over F_p).
    #[error("unsupported over this ring: {0}")]
    Unsupported(&'static str),
    /// The on-disk preprocessing store is unusable (wrong ring/party/key, corruption, version).
    #[error("preprocessing store: {0}")]
    Store(String),
    /// An envelope, file or bit-packing error from coterie-base (names the path or the
    /// content).
    #[error(transparent)]
    Base(#[from] coterie_base::Error),
    /// An I/O error of the preprocessing store.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// A producer implemented in another crate (HE- or HSS-based) failed; its message names
    /// the party and the check (e.g. a rejected proof of plaintext knowledge).
    #[error("producer: {0}")]
    Producer(String),
    /// Encoding or decoding of a local artifact failed.
    #[error("codec: {0}")]
    Codec(String),
}

impl Error {
    /// The name of the failed check, for abort errors.
    pub fn check(&self) -> Option<&'static str> {
        match self {
            Error::MacCheckFailed { check, .. }
            | Error::CommitmentMismatch { check, .. }
            | Error::InconsistentBroadcast { check, .. }
            | Error::PrepCheckFailed { check, .. } => Some(check),
            Error::SacrificeFailed { .. } => Some("triple-sacrifice"),
            _ => None,
        }
    }
}
