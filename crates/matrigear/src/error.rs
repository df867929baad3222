//! The error type of coterie-matrigear.

use coterie_net::PartyId;

/// Which check of the proof of plaintext knowledge's verification failed (seed 002 §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PopkCheck {
    /// A message of the proof has the wrong size or a malformed encoding.
    Shape,
    /// `Enc(μ_z, t) ≠ comm + Σ_i w_i·ct_i`.
    EncIdentity,
    /// `‖μ_z‖_∞` reached the bound `B_z`.
    NormZ,
    /// `‖t‖_∞` reached the bound `B_t`.
    NormT,
    /// Under `Flag = Diag`, `μ_z` has a nonzero coefficient off the multiples of `D`.
    Diagonal,
}

impl std::fmt::Display for PopkCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PopkCheck::Shape => "message shape",
            PopkCheck::EncIdentity => "encryption identity Enc(mu_z, t) = comm + sum w ct",
            PopkCheck::NormZ => "plaintext norm ||mu_z|| < B_z",
            PopkCheck::NormT => "randomness norm ||t|| < B_t",
            PopkCheck::Diagonal => "diagonal plaintext (Flag = Diag)",
        })
    }
}

/// Everything that can go wrong in coterie-matrigear. Protocol aborts name the party and the
/// check that failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error of the BFV layer.
    #[error(transparent)]
    Bfv(#[from] coterie_bfv::Error),
    /// An error of the SPDZ layer (store, engine, material).
    #[error(transparent)]
    Spdz(#[from] coterie_spdz::Error),
    /// A network error (a peer crashed, timed out, aborted or sent something undecodable).
    #[error(transparent)]
    Net(#[from] coterie_net::Error),
    /// A parameter or an argument is outside what the protocols support.
    #[error("invalid: {0}")]
    Invalid(String),
    /// A malformed message or stored value.
    #[error("malformed: {0}")]
    Malformed(String),
    /// The proof of plaintext knowledge rejected `party`'s proof (or, for `party = None`, the
    /// aggregate) at `check`; the protocol aborts.
    #[error("proof of plaintext knowledge rejected{}: {check} (proof {proof}, repetition {rep})", party.map(|p| format!(" party {p}")).unwrap_or_default())]
    ProofRejected {
        /// The party whose contribution failed (`None`: only the aggregate failed).
        party: Option<PartyId>,
        /// The failed check.
        check: PopkCheck,
        /// Which proof of the run (a label such as `"mac-key"` or `"batch 3"`).
        proof: String,
        /// The repetition `j` that failed.
        rep: usize,
    },
    /// A protocol step failed a check other than the proof's (a distributed decryption out of
    /// range, a wrong number of values, a state file of another run); the message names the
    /// party and the step.
    #[error("protocol: {0}")]
    Protocol(String),
    /// An envelope or file error of coterie-base.
    #[error("{0}")]
    Base(String),
}

impl From<coterie_base::Error> for Error {
    fn from(e: coterie_base::Error) -> Self {
        Error::Base(e.to_string())
    }
}

impl From<coterie_math::Error> for Error {
    fn from(e: coterie_math::Error) -> Self {
        Error::Bfv(coterie_bfv::Error::Math(e))
    }
}

/// Result alias for coterie-matrigear.
pub type Result<T> = core::result::Result<T, Error>;
