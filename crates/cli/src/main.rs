//! `coterie`: the one binary of the toolkit.
fn main() {}
