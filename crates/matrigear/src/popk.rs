//! The proof of plaintext knowledge Π_PoPK (seed 002 §5.3).
