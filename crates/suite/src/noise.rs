//! How fast and how quiet the machine was around one cell: a fixed CPU-bound
//! probe on the server's and the client's CPUs before and after it (the
//! machine-speed control), CPU the host stole and CPU busy outside the
//! measured processes while it ran (from /proc/stat), and a bounded wait for
//! quiet before it starts. A shared VM moves by 20% and more between runs;
//! these facts let a report normalise by machine speed and say why a cell
//! is noisy. They cannot undo contention inside a measurement.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::placement::pin_current_thread;
use crate::sampler::sample_group;
pub use netbench_records::noise::{Noise, QUIET_THRESHOLD_CORES};

/// Iterations of one probe trial: about a millisecond on a current core.
const PROBE_ITERS: u32 = 300_000;
/// Trials per probe; the median is kept, so one preempted trial does not
/// move it.
const PROBE_TRIALS: usize = 7;
/// The longest the runner waits for quiet before a cell.
pub const QUIET_MAX_WAIT: Duration = Duration::from_secs(10);
/// How long each look at the machine's load lasts: ten ticks of /proc/stat
/// per CPU, enough to see half a core busy, and short, since the first look
/// is part of every cell (a resident run's rounds have ~100 cells each).
const QUIET_WINDOW: Duration = Duration::from_millis(100);

/// One probe trial's work: integer arithmetic and a table in L1, nothing a
/// compiler can fold away. Its time moves with the core's speed, the host's
/// contention and steal, not with memory or I/O.
fn trial() -> Duration {
    let started = Instant::now();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut table = [0u64; 256];
    let mut acc = 0u64;
    for i in 0..PROBE_ITERS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let slot = (x & 255) as usize;
        table[slot] = table[slot].wrapping_add(x);
        acc = acc.wrapping_add(table[(i & 255) as usize]);
    }
    black_box(acc);
    started.elapsed()
}

/// The median trial time in nanoseconds, on `cpus` (a thread pinned there)
/// or wherever the scheduler puts it. None when the pin fails.
pub fn probe(cpus: Option<&[usize]>) -> Option<f64> {
    std::thread::scope(|s| {
        s.spawn(|| {
            if let Some(cpus) = cpus {
                pin_current_thread(cpus).ok()?;
            }
            let mut times: Vec<Duration> = (0..PROBE_TRIALS).map(|_| trial()).collect();
            times.sort_unstable();
            Some(times[PROBE_TRIALS / 2].as_nanos() as f64)
        })
        .join()
        .ok()
        .flatten()
    })
}

/// The machine's CPU time so far, all CPUs together, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct CpuTicks {
    busy: u64,
    steal: u64,
    total: u64,
}

/// The aggregate `cpu` line of /proc/stat: user nice system idle iowait irq
/// softirq steal (guest time is already in user and nice).
pub(crate) fn parse_stat(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    let (user, nice, system, idle, iowait, irq, softirq, steal) =
        (at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7));
    let busy = user + nice + system + irq + softirq;
    Some(CpuTicks {
        busy,
        steal,
        total: busy + idle + iowait + steal,
    })
}

fn read_stat() -> Option<CpuTicks> {
    parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// Clock ticks per second, the unit of /proc/stat.
fn ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// CPU seconds this process has used, every thread included.
fn own_cpu_s() -> f64 {
    // SAFETY: getrusage writes into the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// CPU seconds of the process groups `pgids` and their descendants so far
/// (0 for a group gone).
fn group_cpu_s(pgids: &[i32]) -> f64 {
    pgids
        .iter()
        .filter_map(|&g| sample_group(g).ok())
        .map(|s| s.cpu_user_s + s.cpu_sys_s)
        .sum()
}

/// The machine's load seen over a stretch of time, netbench's own CPU and
/// the measured processes' (the server, and the back ends it uses) taken
/// out.
#[derive(Debug, Clone)]
pub struct LoadWindow {
    stat: CpuTicks,
    own_s: f64,
    server_s: f64,
    at: Instant,
    pgids: Vec<i32>,
}

/// What a [`LoadWindow`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Load {
    /// Share of all CPU time the host stole.
    pub steal: f64,
    /// Cores busy outside netbench and the server.
    pub other_busy_cores: f64,
}

impl LoadWindow {
    /// Starts watching; `pgids` are the process groups whose CPU is part of
    /// the measurement, not noise: the server's, if one runs, and its back
    /// ends' (a PostgreSQL serving its db requests).
    pub fn start(pgids: &[i32]) -> Option<LoadWindow> {
        Some(LoadWindow {
            stat: read_stat()?,
            own_s: own_cpu_s(),
            server_s: group_cpu_s(pgids),
            at: Instant::now(),
            pgids: pgids.to_vec(),
        })
    }

    pub fn finish(self) -> Option<Load> {
        let stat = read_stat()?;
        let wall = self.at.elapsed().as_secs_f64();
        let own = own_cpu_s() - self.own_s;
        let server = group_cpu_s(&self.pgids) - self.server_s;
        Some(load_between(
            self.stat,
            stat,
            own + server,
            wall,
            ticks_per_s(),
        ))
    }
}

/// The load between two /proc/stat readings `wall` seconds apart, of which
/// `ours_s` CPU seconds were netbench's and the server's.
pub(crate) fn load_between(a: CpuTicks, b: CpuTicks, ours_s: f64, wall: f64, hz: f64) -> Load {
    let total = b.total.saturating_sub(a.total);
    let busy_s = b.busy.saturating_sub(a.busy) as f64 / hz;
    Load {
        steal: if total == 0 {
            0.0
        } else {
            b.steal.saturating_sub(a.steal) as f64 / total as f64
        },
        other_busy_cores: if wall > 0.0 {
            ((busy_s - ours_s) / wall).max(0.0)
        } else {
            0.0
        },
    }
}

/// Waits, in short looks and at most `max_wait`, until the machine is quiet
/// (fewer than [`QUIET_THRESHOLD_CORES`] busy outside netbench); returns the
/// last look's busy cores and how long it waited. A cancel ends the wait.
pub fn wait_for_quiet(
    max_wait: Duration,
    backends: &[i32],
    cancel: &AtomicBool,
) -> (f64, Duration) {
    // The first look is part of every cell; only the looks after it wait.
    let mut first_look_end: Option<Instant> = None;
    loop {
        let Some(window) = LoadWindow::start(backends) else {
            return (0.0, Duration::ZERO);
        };
        std::thread::sleep(QUIET_WINDOW);
        let busy = window.finish().map_or(0.0, |l| l.other_busy_cores);
        let now = Instant::now();
        let waited = now - *first_look_end.get_or_insert(now);
        if busy < QUIET_THRESHOLD_CORES
            || waited + QUIET_WINDOW > max_wait
            || cancel.load(Ordering::Relaxed)
        {
            return (busy, waited);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_cpu_line_of_proc_stat() {
        let text = "cpu  100 5 50 800 10 3 2 30 7 0\ncpu0 50 2 25 400 5 1 1 15 3 0\nintr 1\n";
        let t = parse_stat(text).unwrap();
        assert_eq!(t.busy, 100 + 5 + 50 + 3 + 2);
        assert_eq!(t.steal, 30);
        assert_eq!(t.total, 160 + 800 + 10 + 30);
        assert_eq!(parse_stat("cpu0 1 2 3\n"), None);
        assert_eq!(parse_stat("cpu  1 x 3\n"), None);
        let live = read_stat().expect("this machine has /proc/stat");
        assert!(live.total >= live.busy + live.steal);
    }

    #[test]
    fn load_takes_our_own_cpu_out() {
        let a = CpuTicks {
            busy: 1000,
            steal: 10,
            total: 5000,
        };
        // Two seconds later: 300 ticks (3 s at 100 Hz) busy, 20 stolen.
        let b = CpuTicks {
            busy: 1300,
            steal: 30,
            total: 5400,
        };
        let l = load_between(a, b, 2.0, 2.0, 100.0);
        assert!((l.steal - 20.0 / 400.0).abs() < 1e-12);
        assert!((l.other_busy_cores - 0.5).abs() < 1e-12, "{l:?}");
        // Our share can be larger than what /proc/stat saw (tick rounding):
        // never negative.
        assert_eq!(load_between(a, b, 9.0, 2.0, 100.0).other_busy_cores, 0.0);
        assert_eq!(load_between(a, a, 0.0, 0.0, 100.0), Load::default());
    }

    #[test]
    fn a_probe_runs_where_it_is_pinned_or_says_it_cannot() {
        let cpu = crate::placement::allowed_cpus()[0];
        let t = probe(Some(&[cpu])).unwrap();
        assert!(t > 0.0);
        assert!(probe(None).unwrap() > 0.0);
        // A CPU this machine does not have: the pin fails, no figure.
        assert_eq!(probe(Some(&[crate::suite::MAX_CPUS - 1])), None);
    }

    #[test]
    fn quiet_is_waited_for_within_a_bound() {
        let cancel = AtomicBool::new(false);
        let started = Instant::now();
        let (_, waited) = wait_for_quiet(Duration::from_millis(600), &[], &cancel);
        assert!(waited <= Duration::from_millis(600));
        assert!(started.elapsed() < Duration::from_secs(5));
        // A cancel ends the wait at the first look.
        cancel.store(true, Ordering::Relaxed);
        let (_, waited) = wait_for_quiet(Duration::from_secs(60), &[], &cancel);
        assert!(waited < Duration::from_secs(2));
    }
}
