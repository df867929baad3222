//! The error type of coterie-math.

/// Everything that can go wrong in coterie-math. Arithmetic on valid values never fails; errors come
/// from parameters (a modulus that is not prime, a degree that is not a power of two, ...) and from
/// mismatched operands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A parameter is outside what the operation supports.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Two operands do not live in the same ring / basis / representation.
    #[error("operand mismatch: {0}")]
    Mismatch(String),
    /// Not enough primes of the requested shape exist.
    #[error("not enough NTT-friendly primes: {0}")]
    NotEnoughPrimes(String),
    /// Input data has the wrong length or shape.
    #[error("malformed input: {0}")]
    Malformed(String),
}

/// Result alias for coterie-math.
pub type Result<T> = core::result::Result<T, Error>;
