//! The one error type of coterie-net.

use std::time::Duration;

use crate::PartyId;

/// Result alias of coterie-net.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the party runtime. Every variant that concerns a peer names it.
///
/// The type is `Clone` so that one abort or disconnection can be handed to every pending receive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No message arrived from `party` before the receive deadline.
    #[error("timed out after {after:?} waiting for party {party}")]
    Timeout {
        /// The party we were waiting for.
        party: PartyId,
        /// The timeout that elapsed.
        after: Duration,
    },
    /// The protocol was aborted by `party` (possibly this party itself).
    #[error("protocol aborted by party {party}: {reason}")]
    Aborted {
        /// The party that raised the abort.
        party: PartyId,
        /// Its stated reason.
        reason: String,
    },
    /// The connection to `party` broke before it closed the session (crash, kill, reset).
    #[error("party {party} disconnected: {cause}")]
    Disconnected {
        /// The party whose link broke.
        party: PartyId,
        /// What was observed.
        cause: String,
    },
    /// `party` closed its session normally; no further messages will come from it.
    #[error("party {party} has closed the session; no more messages from it")]
    Closed {
        /// The party that closed.
        party: PartyId,
    },
    /// A frame from `party` could not be parsed (bad length, version, kind, or truncated).
    #[error("malformed frame from party {party}: {cause}")]
    MalformedFrame {
        /// The sender of the frame.
        party: PartyId,
        /// The parse error.
        cause: String,
    },
    /// A frame from `party` announced more bytes than the configured limit.
    #[error("frame from party {party} announces {len} bytes, over the limit of {max}")]
    FrameTooLarge {
        /// The sender of the frame.
        party: PartyId,
        /// Announced length.
        len: u64,
        /// Configured maximum.
        max: usize,
    },
    /// A message from `party` arrived out of order or with the wrong tag.
    #[error("unexpected message from party {party}: {cause}")]
    UnexpectedMessage {
        /// The sender.
        party: PartyId,
        /// Expected versus observed.
        cause: String,
    },
    /// The payload from `party` did not deserialize into the expected type.
    #[error("could not decode message from party {party}: {cause}")]
    Decode {
        /// The sender.
        party: PartyId,
        /// The deserializer's error.
        cause: String,
    },
    /// A value could not be serialized.
    #[error("could not encode message: {0}")]
    Encode(String),
    /// A party id outside `0..n`, or this party's own id where a peer is required.
    #[error("bad party id {party} (n = {n}, this party = {me})")]
    BadParty {
        /// The offending id.
        party: PartyId,
        /// Number of parties.
        n: usize,
        /// This party's id.
        me: PartyId,
    },
    /// A commitment from `party` did not open to the revealed value.
    #[error("commitment from party {party} does not open (domain {domain:?})")]
    CommitmentMismatch {
        /// The party whose opening failed.
        party: PartyId,
        /// The commitment's domain label.
        domain: String,
    },
    /// The party configuration is invalid or could not be read.
    #[error("party config: {0}")]
    Config(String),
    /// Certificates, keys or the TLS layer failed.
    #[error("TLS: {0}")]
    Tls(String),
    /// A connection to or from `party` could not be established before the start-up deadline.
    #[error("could not connect with party {party}: {cause}")]
    Connect {
        /// The peer.
        party: PartyId,
        /// Last error seen.
        cause: String,
    },
    /// An I/O error on the link with `party`.
    #[error("I/O error with party {party}: {cause}")]
    Io {
        /// The peer.
        party: PartyId,
        /// The I/O error, as text.
        cause: String,
    },
    /// A protocol run over the mesh failed for a reason of its own (its crate's error, as text).
    #[error("protocol failed: {0}")]
    Protocol(String),
}

impl Error {
    /// The peer this error is about, where there is one.
    pub fn party(&self) -> Option<PartyId> {
        match self {
            Error::Timeout { party, .. }
            | Error::Aborted { party, .. }
            | Error::Disconnected { party, .. }
            | Error::Closed { party }
            | Error::MalformedFrame { party, .. }
            | Error::FrameTooLarge { party, .. }
            | Error::UnexpectedMessage { party, .. }
            | Error::Decode { party, .. }
            | Error::BadParty { party, .. }
            | Error::CommitmentMismatch { party, .. }
            | Error::Connect { party, .. }
            | Error::Io { party, .. } => Some(*party),
            Error::Encode(_) | Error::Config(_) | Error::Tls(_) | Error::Protocol(_) => None,
        }
    }
}
