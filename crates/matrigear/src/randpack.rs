//! Randomized packing (seed 002 §5.2).
