//! Seeds for generated documents: given, or new for each run.

/// A seed that differs between runs, so a server cannot prepare for the
/// documents it will get.
pub(crate) fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // Mixed with the process id so two runs in the same nanosecond differ.
    nanos ^ (u64::from(std::process::id()) << 32) ^ 0x6e65_7462_656e_6368
}
