//! Peer benchmarks live in benches/.
