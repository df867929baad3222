//! coterie's shared infrastructure, in one place: every crate of the workspace stores and sends
//! its values through these helpers instead of keeping a copy of its own.
//!
//! | module | what |
//! |---|---|
//! | [`envelope`] | the one versioned envelope for everything stored or sent (magic, a 4-byte tag naming the content, a version, a bounded length) |
//! | [`fsio`] | atomic durable writes (temp file, fsync, rename, fsync of the directory), owner-only files, bounded reads |
//! | [`bits`] | LSB-first bit packing of fixed-width values |
//! | [`bytes`] | serde helpers that encode byte vectors as one byte string (fast to decode, same postcard format) |
//! | [`progress`] | progress of long work reported through a callback, so library APIs carry no UI types |
//!
//! The crate sits below every other crate of the workspace and depends on nothing of coterie's.
//! It holds no cryptography. The one big-integer wipe is `coterie_math::bigint::wipe`, beside the
//! big-integer type it wipes.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bits;
pub mod bytes;
pub mod envelope;
mod error;
pub mod fsio;
pub mod progress;

pub use envelope::{Versioned, from_envelope, to_envelope};
pub use error::{Error, Result};
pub use progress::{Progress, ProgressEvent, ProgressTask};
