//! Versioned serialization (TODO)
