//! BFV benchmarks (filled in below).
fn main() {}
