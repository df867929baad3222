//! leakage (in progress)
