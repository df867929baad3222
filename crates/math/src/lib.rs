//! # coterie-math
//!
//! The lattice arithmetic core that every coterie scheme stands on. It knows nothing of schemes or
//! protocols; schemes (BFV, TFHE, HSS) depend on it, never the other way round.
//!
//! | module | what it holds |
//! |---|---|
//! | [`modulus`] | word-size modular arithmetic (Barrett and Shoup) for moduli below 2^62 |
//! | [`primes`] | primality testing and generation of NTT-friendly primes |
//! | [`kernels`] | vectorized slice kernels (AVX2+FMA exact modular product for primes below 2^50) |
//! | [`dot`] | wrapping 64×128-bit inner products `Σ a_i·v_i mod 2^128` (AVX-512F/AVX2 kernels) |
//! | [`ntt`] | negacyclic NTT over Z_q\[X\]/(X^N+1) on `tfhe-ntt` |
//! | [`rns`] | RNS bases: CRT reconstruction, fast base conversion/extension, exact scaling, modulus switching |
//! | [`poly`] | RNS polynomial ring elements in coefficient and NTT form, automorphisms |
//! | [`gadget`] | signed power-of-two (plain and zero-mean) and RNS-digit gadget decomposition |
//! | [`sample`] | samplers: uniform, binary, ternary, centered binomial, discrete Gaussian |
//! | [`prg`] | seeded XOF for public common reference strings |
//! | [`fft`] | negacyclic floating-point FFT over the discretized torus on `tfhe-fft` |
//! | [`torus`] | the discretized torus `Z_{2^32}` / `Z_{2^64}` as machine words ([`torus::Torus`]) |
//! | [`lwe`] | the one LWE ciphertext type of TFHE and threshold decryption, its file format |
//! | [`intpoly`] | exact integer negacyclic products (where FFT error is not allowed) |
//! | [`buffers`] | large secret buffers: huge-page backing, bulk wiping with non-temporal stores |
//! | [`bigint`] | big integers up to 4096 bits and beyond (GMP through `rug`) |
//! | [`zp_ntt`] | big-integer cyclic NTT over `Z_p` and the slot maps of `Z_p[X]/(X^D − b)`, `p = b^M + 1` |
#![warn(missing_docs)]

pub mod bigint;
#[allow(unsafe_code)] // madvise and non-temporal stores, each block with its SAFETY note
pub mod buffers;
pub mod demo;
#[allow(unsafe_code)] // SIMD intrinsics, each block with its SAFETY note
pub mod dot;
pub mod error;
pub mod fft;
pub mod gadget;
pub mod intpoly;
#[allow(unsafe_code)] // SIMD intrinsics, each block with its SAFETY note
pub mod kernels;
pub mod lwe;
pub mod modulus;
pub mod ntt;
pub mod poly;
pub mod prg;
pub mod primes;
pub mod rns;
pub mod sample;
pub mod torus;
pub mod zp_ntt;

pub use error::{Error, Result};
