//! `coterie demo math`: filled in by the lead (coterie-math demo).

/// Runs the math demo at ring degree `2^log_n`.
pub fn run(log_n: u32) -> Result<(), String> {
    let _ = log_n;
    Ok(())
}
