//! The discretized torus `T_q = (1/q)Z/Z`, `q = 2^32` or `2^64`: [`coterie_math::torus`],
//! re-exported here so that `coterie_tfhe::torus::Torus` keeps naming the one trait.
//!
//! ```
//! use coterie_tfhe::torus::Torus;
//! assert_eq!(u32::encode(0.125), 1 << 29);
//! ```

pub use coterie_math::torus::*;
