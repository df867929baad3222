//! Tests of the Fourier engine: products against the schoolbook, the AVX-512 kernels against
//! the scalar ones, and the fused decomposition against `coterie_math::gadget`.
use super::*;
use coterie_math::intpoly::negacyclic_mul_small_add;

#[test]
fn product_matches_schoolbook() {
    for n in [32usize, 512, 1024, 2048] {
        let e = FourierEngine::get(n).unwrap();
        let mut s = e.new_scratch();
        let h = n / 2;
        let a: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0x5555)
            .collect();
        let d: Vec<i64> = (0..n as i64).map(|i| (i * 37 % 1023) - 511).collect();
        let (mut fa, mut fd, mut acc) = (
            vec![c64::new(0.0, 0.0); h],
            vec![c64::new(0.0, 0.0); h],
            vec![c64::new(0.0, 0.0); h],
        );
        e.forward_torus(&a, &mut fa, &mut s);
        e.forward_i64(&d, &mut fd, &mut s);
        e.matrix_product(&mut acc, &fd, &fa, 1, 1);
        let mut got = vec![0u32; n];
        e.backward_add_torus(&mut acc, &mut got, &mut s);
        let mut want = vec![0u32; n];
        negacyclic_mul_small_add(&mut want, &d, &a);
        assert_eq!(got, want, "N = {n}");
    }
}

#[test]
fn avx512_and_scalar_kernels_agree() {
    let e = FourierEngine::get(64).unwrap();
    let h = 32;
    let (rows, cols) = (3, 2);
    let dig: Vec<c64> = (0..rows * h)
        .map(|i| c64::new(i as f64 * 0.5 - 3.0, 1.0 - i as f64))
        .collect();
    let mat: Vec<c64> = (0..rows * cols * h)
        .map(|i| c64::new((i % 7) as f64, (i % 5) as f64 - 2.0))
        .collect();
    let mut a1 = vec![c64::new(9.0, 9.0); cols * h];
    let mut a2 = a1.clone();
    e.matrix_product(&mut a1, &dig, &mat, rows, cols);
    matrix_product_scalar(&mut a2, &dig, &mat, rows, cols, h);
    for (x, y) in a1.iter().zip(&a2) {
        assert!((x - y).norm() < 1e-9);
    }
}

#[test]
fn fused_decomposition_matches_decomposer() {
    let n = 64;
    let e = FourierEngine::get(n).unwrap();
    let mut s = e.new_scratch();
    for (b, l) in [(10u32, 2u32), (3, 5), (23, 1), (8, 4), (4, 8)] {
        let dec = Decomposer::new(32, b, l).unwrap();
        let src: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(0x9E37_79B9).rotate_left(i))
            .collect();
        let mut fused = vec![c64::new(0.0, 0.0); l as usize * n / 2];
        e.forward_decomposed(&src, &dec, &mut fused, &mut s);
        for lev in 0..l as usize {
            let digits: Vec<i64> = src
                .iter()
                .map(|&x| dec.decompose(u64::from(x))[lev])
                .collect();
            let mut want = vec![c64::new(0.0, 0.0); n / 2];
            e.forward_i64(&digits, &mut want, &mut s);
            for (x, y) in fused[lev * n / 2..(lev + 1) * n / 2].iter().zip(&want) {
                assert!((x - y).norm() < 1e-6, "b {b} l {l} level {lev}");
            }
        }
    }
}

#[test]
fn branchless_conversion_matches() {
    use coterie_math::fft::f64_to_wrapping_u64;
    let mut xs = vec![
        0.0,
        -0.0,
        0.4,
        0.6,
        -0.6,
        1.4,
        -1.4,
        2.5,
        -2.5,
        2f64.powi(52) + 2.0,
        -(2f64.powi(60)) * 1.5,
    ];
    let mut v = 0x1234_5678_9abc_def0u64;
    for i in 0..20000 {
        v ^= v << 13;
        v ^= v >> 7;
        v ^= v << 17;
        let m = (v >> 11) as f64 / 2f64.powi(53) - 0.5;
        xs.push(m * 2f64.powi(i % 80));
    }
    for x in xs {
        if x.fract().abs() == 0.5 {
            // Exact ties: half away from zero here, half to even there.
            let d = f64_to_wrapping_u64_branchless(x).wrapping_sub(f64_to_wrapping_u64(x));
            assert!(d == 0 || d == 1 || d == u64::MAX, "x = {x}");
            continue;
        }
        assert_eq!(
            f64_to_wrapping_u64_branchless(x),
            f64_to_wrapping_u64(x),
            "x = {x}"
        );
    }
    assert_eq!(f64_to_wrapping_u64_branchless(2f64.powi(70)), 0);
    assert_eq!(f64_to_wrapping_u64_branchless(1e-300), 0);
}

#[test]
fn vector_and_scalar_untwist_agree() {
    if !cpu_has_avx512() {
        return;
    }
    let e = FourierEngine::get(256).unwrap();
    let mut v = 0x2545_f491_4f6c_dd1du64;
    let buf: Vec<c64> = (0..128)
        .map(|i| {
            v ^= v << 13;
            v ^= v >> 7;
            v ^= v << 17;
            let x = (v >> 11) as f64 / 2f64.powi(53) - 0.5;
            c64::new(x * 2f64.powi(i % 60), -x * 2f64.powi((i * 7) % 60))
        })
        .collect();
    let mut a = vec![5u64; 256];
    let mut b = vec![5u64; 256];
    untwist_add(&e, &buf, &mut a);
    // SAFETY: AVX-512 checked above.
    unsafe { untwist_add_avx512(&e, &buf, &mut b) };
    // Same up to the last bits of the f64 arithmetic (the vector form fuses multiply-adds;
    // values below 2^60, one ulp at most 2^8).
    for (x, y) in a.iter().zip(&b) {
        let d = (x.wrapping_sub(*y) as i64).unsigned_abs();
        assert!(d <= 1 << 10, "{x} vs {y}");
    }
}

#[test]
fn split_layout_kernel_matches() {
    let e = FourierEngine::get(64).unwrap();
    let h = 32;
    let (rows, cols) = (4, 3);
    let dig: Vec<c64> = (0..rows * h)
        .map(|i| c64::new(i as f64 * 0.5 - 3.0, 1.0 - i as f64))
        .collect();
    let mat: Vec<c64> = (0..rows * cols * h)
        .map(|i| c64::new((i % 7) as f64, (i % 5) as f64 - 2.0))
        .collect();
    let mut want = vec![c64::new(0.0, 0.0); cols * h];
    matrix_product_scalar(&mut want, &dig, &mat, rows, cols, h);
    let (mut d2, mut m2) = (dig.clone(), mat.clone());
    e.to_split_layout(&mut d2);
    e.to_split_layout(&mut m2);
    let mut got = vec![c64::new(7.0, 7.0); cols * h];
    e.matrix_product_split(&mut got, &d2, &m2, rows, cols);
    for (x, y) in got.iter().zip(&want) {
        assert!((x - y).norm() < 1e-9);
    }
}

#[test]
fn rejects_bad_sizes() {
    assert!(FourierEngine::get(48).is_err());
    assert!(FourierEngine::get(16).is_err());
}
