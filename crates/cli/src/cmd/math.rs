//! `coterie demo math`: the RLWE round trip of `coterie_math::demo` (real work, checked), with
//! the time of every step printed.

/// Runs the math demo at ring degree `2^log_n` (`10 ≤ log_n ≤ 16`).
pub fn run(log_n: u32) -> Result<(), String> {
    if !(10..=16).contains(&log_n) {
        return Err(format!(
            "--n {log_n}: the ring degree is 2^n with 10 ≤ n ≤ 16"
        ));
    }
    println!(
        "coterie demo math: RLWE round trip in Z_Q[X]/(X^{}+1), Q = 5 primes of 44 bits",
        1usize << log_n
    );
    let r = coterie_math::demo::rlwe_round_trip(log_n, &mut |what, t| {
        println!("  {what:<52} {:>10.3} ms", t.as_secs_f64() * 1e3)
    })
    .map_err(|e| e.to_string())?;
    if r.wrong_coefficients > 0 {
        return Err(format!(
            "decryption wrong in {} of {} coefficients",
            r.wrong_coefficients, r.n
        ));
    }
    println!("  decrypted {} message bits correctly", r.n);
    if !r.base_extension_exact {
        return Err("base extension round trip changed the ciphertext".into());
    }
    println!("  base extension round trip exact");
    println!("ok");
    Ok(())
}
