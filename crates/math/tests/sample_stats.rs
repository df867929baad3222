//! Statistical tests of the samplers in `coterie_math::sample` and the CRS expansion in
//! `coterie_math::prg`.
//!
//! Every moment test uses 10^6 samples and a bound of 5 standard errors of the estimator, derived
//! from the distribution's own higher moments (the standard error of the sample variance is
//! `sqrt((μ4 − σ⁴)/n)`, of the sample fourth moment `sqrt((μ8 − μ4²)/n)`). The RNGs are seeded with
//! fixed seeds, so the outcome is reproducible; a biased sampler still fails them. Chi-square bounds
//! are the p = 10^-6 quantiles of the chi-square law with the stated degrees of freedom.
//!
//! Run optimized: `cargo test --profile ci -p coterie-math --test sample_stats`.

use coterie_math::prg::{Csprng, Xof, expand_uniform_mod};
use coterie_math::sample::{
    DiscreteGaussian, centered_binomial, ternary, ternary_uniform, uniform_binary, uniform_mod,
};

const N: usize = 1_000_000;

fn rng(tag: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([tag; 32])
}

/// Empirical mean, unbiased variance and fourth central moment.
fn moments(xs: &[f64]) -> (f64, f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let (mut m2, mut m4) = (0.0, 0.0);
    for &x in xs {
        let d = x - mean;
        let d2 = d * d;
        m2 += d2;
        m4 += d2 * d2;
    }
    (mean, m2 / (n - 1.0), m4 / n)
}

/// Asserts mean and variance within 5 standard errors of the ideal (`mu4` is the ideal fourth
/// central moment). Returns the relative tolerance used for the variance.
fn check_mean_var(name: &str, xs: &[f64], mu: f64, var: f64, mu4: f64) -> f64 {
    let n = xs.len() as f64;
    let (mean, s2, _) = moments(xs);
    let tol_mean = 5.0 * (var / n).sqrt();
    let tol_var = 5.0 * ((mu4 - var * var) / n).sqrt();
    assert!(
        (mean - mu).abs() <= tol_mean,
        "{name}: mean {mean} vs {mu} (tolerance {tol_mean})"
    );
    assert!(
        (s2 - var).abs() <= tol_var,
        "{name}: variance {s2} vs {var} (tolerance {tol_var})"
    );
    tol_var / var
}

/// Pearson chi-square statistic of `counts` against `probs` (which sum to 1) for `n` draws.
fn chi_square(counts: &[u64], probs: &[f64], n: usize) -> f64 {
    counts
        .iter()
        .zip(probs)
        .map(|(&c, &p)| {
            let e = p * n as f64;
            (c as f64 - e).powi(2) / e
        })
        .sum()
}

/// Gaussian: mean, variance (rel. tolerance 5·sqrt(2/n) ≈ 0.71 %), fourth moment (3σ⁴, rel.
/// tolerance 5·sqrt(96/n)/3 ≈ 1.6 %), symmetry of signs, and the tail cut.
fn check_gaussian(sigma: f64, tag: u8) {
    let g = DiscreteGaussian::new(sigma).unwrap();
    let mut xs = vec![0i64; N];
    g.fill(&mut rng(tag), &mut xs);
    assert!(
        xs.iter().all(|&x| x.abs() <= g.max_abs()),
        "σ = {sigma}: a sample beyond the tail cut {}",
        g.max_abs()
    );
    let f: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
    let var = sigma * sigma;
    let rel = check_mean_var(
        &format!("gaussian σ={sigma}"),
        &f,
        0.0,
        var,
        3.0 * var * var,
    );
    assert!(rel < 0.0072);
    let (_, _, m4) = moments(&f);
    let tol4 = 5.0 * (96.0f64).sqrt() * var * var / (N as f64).sqrt();
    assert!(
        (m4 - 3.0 * var * var).abs() <= tol4,
        "σ = {sigma}: fourth moment {m4} vs {}",
        3.0 * var * var
    );
    let pos = xs.iter().filter(|&&x| x > 0).count() as f64;
    let neg = xs.iter().filter(|&&x| x < 0).count() as f64;
    assert!(
        (pos - neg).abs() <= 5.0 * (pos + neg).sqrt(),
        "σ = {sigma}: {pos} positive vs {neg} negative"
    );
}

#[test]
fn gaussian_sigma_3_2() {
    check_gaussian(3.2, 1);
}

#[test]
fn gaussian_sigma_19_2() {
    check_gaussian(19.2, 2);
}

#[test]
fn gaussian_sigma_2_pow_10() {
    check_gaussian(1024.0, 3);
}

#[test]
fn gaussian_sigma_2_pow_20() {
    check_gaussian(1_048_576.0, 4);
}

/// Ideal probabilities of D_{Z,σ} (f64, enough for a chi-square test).
fn gaussian_pmf(sigma: f64) -> impl Fn(i64) -> f64 {
    let lim = (40.0 * sigma).ceil() as i64;
    let rho = move |x: i64| (-(x as f64).powi(2) / (2.0 * sigma * sigma)).exp();
    let total: f64 = (-lim..=lim).map(rho).sum();
    move |x| rho(x) / total
}

#[test]
fn gaussian_pmf_chi_square_direct_table() {
    // σ = 3.2 (direct CDT): bins -13..=13 and one bin for |x| > 13; 27 degrees of freedom.
    let sigma = 3.2;
    let mut xs = vec![0i64; N];
    DiscreteGaussian::new(sigma)
        .unwrap()
        .fill(&mut rng(5), &mut xs);
    let pmf = gaussian_pmf(sigma);
    let mut counts = vec![0u64; 28];
    for &x in &xs {
        let bin = if x.abs() > 13 { 27 } else { (x + 13) as usize };
        counts[bin] += 1;
    }
    let mut probs: Vec<f64> = (-13..=13).map(&pmf).collect();
    probs.push(1.0 - probs.iter().sum::<f64>());
    let chi2 = chi_square(&counts, &probs, N);
    assert!(
        chi2 < 77.19,
        "chi-square {chi2} (27 dof, p = 1e-6 bound 77.19)"
    );
}

#[test]
fn gaussian_pmf_chi_square_convolution() {
    // σ = 30 goes through one convolution level (x = x_r + 4y): bins of width 10 on [-100, 100)
    // and two tail bins; 21 degrees of freedom.
    let sigma = 30.0;
    let mut xs = vec![0i64; N];
    DiscreteGaussian::new(sigma)
        .unwrap()
        .fill(&mut rng(6), &mut xs);
    let pmf = gaussian_pmf(sigma);
    let bin_of = |x: i64| -> usize {
        if x < -100 {
            0
        } else if x >= 100 {
            21
        } else {
            ((x + 100) / 10) as usize + 1
        }
    };
    let mut counts = [0u64; 22];
    for &x in &xs {
        counts[bin_of(x)] += 1;
    }
    let mut probs = [0.0f64; 22];
    for x in -1300..=1300 {
        probs[bin_of(x)] += pmf(x);
    }
    let chi2 = chi_square(&counts, &probs, N);
    assert!(
        chi2 < 67.15,
        "chi-square {chi2} (21 dof, p = 1e-6 bound 67.15)"
    );
}

#[test]
fn centered_binomial_moments() {
    for (eta, tag) in [(2u32, 10u8), (21, 11), (40, 12)] {
        let mut xs = vec![0i64; N];
        centered_binomial(&mut rng(tag), eta, &mut xs).unwrap();
        assert!(xs.iter().all(|&x| x.abs() <= eta as i64));
        let f: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
        let e = eta as f64;
        // Sum of η iid d ∈ {-1,0,1} with P(±1) = 1/4: E d² = E d⁴ = 1/2.
        let mu4 = e / 2.0 + 3.0 * e * (e - 1.0) / 4.0;
        let rel = check_mean_var(&format!("binomial η={eta}"), &f, 0.0, e / 2.0, mu4);
        assert!(rel < 0.01);
    }
}

/// Asserts an empirical frequency within 5 standard errors of `p`.
fn check_freq(name: &str, count: usize, n: usize, p: f64) {
    let freq = count as f64 / n as f64;
    let tol = 5.0 * (p * (1.0 - p) / n as f64).sqrt();
    assert!(
        (freq - p).abs() <= tol,
        "{name}: frequency {freq} vs {p} (tolerance {tol})"
    );
}

#[test]
fn ternary_probabilities() {
    let p = 0.113546; // seed 003 (AKÖ)
    let mut xs = vec![0i64; N];
    ternary(&mut rng(20), p, &mut xs).unwrap();
    assert!(xs.iter().all(|&x| (-1..=1).contains(&x)));
    let count_in = |xs: &[i64], v: i64| xs.iter().filter(|&&x| x == v).count();
    let count = |v: i64| count_in(&xs, v);
    check_freq("ternary P(+1)", count(1), N, p);
    check_freq("ternary P(-1)", count(-1), N, p);
    check_freq("ternary P(0)", count(0), N, 1.0 - 2.0 * p);

    let mut ys = vec![0i64; N];
    ternary_uniform(&mut rng(21), &mut ys);
    for v in -1..=1 {
        check_freq("ternary_uniform", count_in(&ys, v), N, 1.0 / 3.0);
    }
}

#[test]
fn binary_frequencies() {
    let mut xs = vec![0i64; N];
    uniform_binary(&mut rng(30), &mut xs);
    assert!(xs.iter().all(|&x| x == 0 || x == 1));
    let ones = xs.iter().filter(|&&x| x == 1).count();
    check_freq("binary P(1)", ones, N, 0.5);
    // Every bit position of the 64-bit words is used and balanced.
    for pos in 0..64 {
        let sub: Vec<i64> = xs.iter().skip(pos).step_by(64).copied().collect();
        let ones = sub.iter().filter(|&&x| x == 1).count();
        check_freq(&format!("binary bit {pos}"), ones, sub.len(), 0.5);
    }
}

#[test]
fn uniform_mod_large_prime_moments() {
    // 2^60 − 93 is prime. Values normalized by q: mean (q−1)/2q, variance (q²−1)/12q²,
    // fourth central moment (q²−1)(3q²−7)/240q⁴ (all ≈ the continuous uniform's).
    for (q, tag) in [((1u64 << 60) - 93, 40u8), ((1u64 << 59) + 1, 41)] {
        let mut xs = vec![0u64; N];
        uniform_mod(&mut rng(tag), q, &mut xs).unwrap();
        assert!(xs.iter().all(|&x| x < q), "value ≥ q");
        let qf = q as f64;
        let f: Vec<f64> = xs.iter().map(|&x| x as f64 / qf).collect();
        let q2 = qf * qf;
        let var = (q2 - 1.0) / (12.0 * q2);
        let mu4 = (q2 - 1.0) * (3.0 * q2 - 7.0) / (240.0 * q2 * q2);
        let rel = check_mean_var(
            &format!("uniform q={q}"),
            &f,
            (qf - 1.0) / (2.0 * qf),
            var,
            mu4,
        );
        assert!(rel < 0.01);
        // The top half of [0, q) and the bottom half are equally likely.
        let high = xs.iter().filter(|&&x| x >= q / 2).count();
        check_freq("uniform upper half", high, N, (q - q / 2) as f64 / qf);
    }
}

#[test]
fn uniform_mod_small_q_chi_square() {
    let q = 17u64;
    let mut xs = vec![0u64; N];
    uniform_mod(&mut rng(50), q, &mut xs).unwrap();
    let mut counts = vec![0u64; q as usize];
    for &x in &xs {
        assert!(x < q);
        counts[x as usize] += 1;
    }
    let probs = vec![1.0 / q as f64; q as usize];
    let chi2 = chi_square(&counts, &probs, N);
    assert!(
        chi2 < 58.33,
        "chi-square {chi2} (16 dof, p = 1e-6 bound 58.33)"
    );
    let f: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
    let qf = q as f64;
    let var = (qf * qf - 1.0) / 12.0;
    let mu4 = (qf * qf - 1.0) * (3.0 * qf * qf - 7.0) / 240.0;
    check_mean_var("uniform q=17", &f, (qf - 1.0) / 2.0, var, mu4);
}

#[test]
fn crs_expansion_is_uniform_and_deterministic() {
    let seed = [0x5au8; 32];
    let moduli = [(1u64 << 60) - 93, 17];
    let a = expand_uniform_mod(&seed, b"coterie/test/crs/v1", &moduli, N / 2).unwrap();
    assert_eq!(
        a,
        expand_uniform_mod(&seed, b"coterie/test/crs/v1", &moduli, N / 2).unwrap()
    );
    assert_ne!(
        a,
        expand_uniform_mod(&seed, b"coterie/test/crs/v2", &moduli, N / 2).unwrap()
    );
    let (big, small) = a.split_at(N / 2);
    assert!(big.iter().all(|&x| x < moduli[0]) && small.iter().all(|&x| x < 17));
    let mut counts = vec![0u64; 17];
    for &x in small {
        counts[x as usize] += 1;
    }
    let chi2 = chi_square(&counts, &[1.0 / 17.0; 17], N / 2);
    assert!(chi2 < 58.33, "chi-square {chi2}");
    // The Xof is an ordinary CryptoRng for the samplers as well.
    let mut g1 = vec![0i64; 1000];
    let mut g2 = vec![0i64; 1000];
    let dg = DiscreteGaussian::new(3.2).unwrap();
    dg.fill(&mut Xof::new(&seed, b"e/v1", 0), &mut g1);
    dg.fill(&mut Xof::new(&seed, b"e/v1", 0), &mut g2);
    assert_eq!(g1, g2);
}

#[test]
fn crs_known_answer_v1() {
    // Same vector as the unit test in prg.rs: the version-1 CRS format must not drift.
    let seed: [u8; 32] = core::array::from_fn(|i| i as u8);
    let moduli = [0x0fff_ffff_fffc_0001u64, 17, 1 << 20, 3];
    let out = expand_uniform_mod(&seed, b"coterie/test/kat/v1", &moduli, 4).unwrap();
    assert_eq!(
        out,
        [
            0x015f_346c_8e4c_ba85,
            0x0428_f733_014a_9ced,
            0x0952_46ca_19d0_5d63,
            0x0d51_8ac5_5ae8_4cf6,
            10,
            3,
            9,
            9,
            749_219,
            44_408,
            116_838,
            521_368,
            2,
            1,
            0,
            0,
        ]
    );
}

#[test]
#[ignore = "slow: 10^7 Gaussian samples (run by bench scripts)"]
fn gaussian_pmf_chi_square_ten_million() {
    let n = 10_000_000;
    for (sigma, tag) in [(3.2, 60u8), (19.2, 61)] {
        let mut xs = vec![0i64; n];
        DiscreteGaussian::new(sigma)
            .unwrap()
            .fill(&mut rng(tag), &mut xs);
        let pmf = gaussian_pmf(sigma);
        let lim = (4.0 * sigma) as i64; // bins -lim..=lim, plus the tail
        let mut counts = vec![0u64; 2 * lim as usize + 2];
        for &x in &xs {
            let bin = if x.abs() > lim {
                2 * lim as usize + 1
            } else {
                (x + lim) as usize
            };
            counts[bin] += 1;
        }
        let mut probs: Vec<f64> = (-lim..=lim).map(&pmf).collect();
        probs.push(1.0 - probs.iter().sum::<f64>());
        let dof = (counts.len() - 1) as f64;
        let chi2 = chi_square(&counts, &probs, n);
        // Normal approximation of the chi-square quantile, 6 standard deviations.
        assert!(
            chi2 < dof + 6.0 * (2.0 * dof).sqrt(),
            "σ = {sigma}: chi2 {chi2}, dof {dof}"
        );
    }
}
