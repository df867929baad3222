//! The crate's one error type.

/// Errors of coterie-threshold.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error of the SPDZ engine (network, MAC check, exhausted preprocessing, ...).
    #[error("spdz: {0}")]
    Spdz(#[from] coterie_spdz::Error),
    /// Parameters that the protocols cannot use.
    #[error("invalid parameters: {0}")]
    Params(String),
    /// A ciphertext that does not match the parameters or is malformed; refused before any
    /// preprocessing is spent.
    #[error("malformed ciphertext: {0}")]
    Ciphertext(String),
    /// A gate bundle that does not fit (wrong shape) or was already consumed.
    #[error("gate: {0}")]
    Gate(String),
    /// Too few gate bundles for the requested batch.
    #[error("gate pool exhausted: wanted {wanted}, available {available}")]
    Exhausted {
        /// Bundles needed.
        wanted: usize,
        /// Bundles available.
        available: usize,
    },
    /// A key that does not match the parameters, or a malformed key input.
    #[error("key: {0}")]
    Key(String),
    /// The pipelined schedule detected cheating or inconsistency and aborted (before any
    /// output was revealed).
    #[error("abort: check {check} failed (party {party})")]
    Abort {
        /// The check that failed.
        check: &'static str,
        /// The party blamed (the sender of the offending message, or the detecting party for
        /// a failed MAC sum).
        party: usize,
    },
    /// A malformed message from a party.
    #[error("malformed message from party {party}: {cause}")]
    Malformed {
        /// Sender.
        party: usize,
        /// What was wrong.
        cause: String,
    },
    /// An authenticated output that violates an invariant of the protocol (would indicate a
    /// bug, since every opening was MAC-checked).
    #[error("protocol invariant violated: {0}")]
    Invariant(String),
    /// A file of a decryption node or client (key shares, public key, ciphertext) could not be
    /// read or written.
    #[error("file: {0}")]
    File(#[source] coterie_base::Error),
    /// The decryption service's client protocol failed: TLS set-up, the connection, a frame, or
    /// an answer out of protocol.
    #[error("client protocol: {0}")]
    Client(String),
}

/// Result alias.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The peer whose loss ended a run, when that is what this error is: the link with it broke
    /// (crash, kill, reset), it closed, it was silent past the deadline, or it could not be
    /// reached — the failures a decryption node recovers from by reconnecting
    /// ([`crate::node::run_node_reconnecting`]). `None` for everything else: an abort by a party,
    /// a failed check (MAC, consistency, a malformed message), a local failure.
    ///
    /// ```
    /// use coterie_threshold::Error;
    /// let lost = Error::from(coterie_spdz::Error::from(coterie_net::Error::Disconnected {
    ///     party: 2,
    ///     cause: "connection reset".into(),
    /// }));
    /// assert_eq!(lost.lost_peer(), Some(2));
    /// let cheat = Error::Abort { check: "mac", party: 2 };
    /// assert_eq!(cheat.lost_peer(), None);
    /// ```
    pub fn lost_peer(&self) -> Option<usize> {
        match self {
            Error::Spdz(coterie_spdz::Error::Net(e)) => net_lost_peer(e),
            _ => None,
        }
    }
}

/// [`Error::lost_peer`] of a coterie-net error.
pub(crate) fn net_lost_peer(e: &coterie_net::Error) -> Option<usize> {
    use coterie_net::Error as N;
    match e {
        N::Disconnected { party, .. }
        | N::Closed { party }
        | N::Timeout { party, .. }
        | N::Io { party, .. }
        | N::Connect { party, .. } => Some(*party),
        _ => None,
    }
}
