//! CPU time of the calling thread and of the whole process, for the proof that
//! the client was not the bottleneck, and the process's peak memory.

use std::time::Duration;

/// CPU time (user + system) used so far by the calling thread.
pub(crate) fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // every Linux kernel since 2.6.12 supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time (user + system) used so far by every thread of this process.
pub(crate) fn process_cpu() -> Duration {
    // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The process's peak resident memory so far, in bytes (0 if unknown).
pub(crate) fn peak_rss_bytes() -> u64 {
    // SAFETY: as in process_cpu.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    // Linux reports kibibytes.
    (ru.ru_maxrss.max(0) as u64) * 1024
}

/// The process's resident memory now, in bytes (0 if unknown): the base a
/// run's growth is measured from (the peak so far may be higher than what
/// the process holds when the run starts).
pub(crate) fn rss_bytes() -> u64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    // SAFETY: sysconf with a constant name has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64;
    statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<u64>().ok())
        .map_or(0, |pages| pages * page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_advances_with_work() {
        let before = thread_cpu();
        let mut x = 0u64;
        while thread_cpu() < before + Duration::from_millis(5) {
            x = x.wrapping_add(1);
        }
        assert!(x > 0);
        assert!(process_cpu() >= thread_cpu() - before);
    }
}
