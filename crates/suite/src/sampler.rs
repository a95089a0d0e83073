//! Resource use of a server's whole process tree, sampled from /proc while a
//! load runs: CPU time, memory, threads and context switches of every process
//! in the server's process group and every descendant of those.
//!
//! The server runs as the leader of its own process group (see
//! `server::start`), and the processes it forks (nginx workers, a Node
//! cluster, gunicorn workers) stay in that group; a descendant that starts
//! its own session (PostgreSQL's backends do) is found by its parent.

use std::fs;
use std::io;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub use netbench_records::sample::Sample;
use serde::{Deserialize, Serialize};

/// The usual sampling interval: 10 Hz.
pub const DEFAULT_EVERY: Duration = Duration::from_millis(100);

/// Most samples a [`Sampler`] holds: one hour at 10 Hz, about 2.5 MB. When
/// full, every other sample is dropped and the interval doubles, so a long
/// run keeps between half and all of this many evenly spaced samples
/// covering the whole run, from its first sample on.
pub const MAX_SAMPLES: usize = 36_000;

/// Shortest interval a [`Sampler`] accepts: each sample reads /proc for every
/// process on the machine.
const MIN_EVERY: Duration = Duration::from_millis(1);

/// Samples every process whose process group is `pgid`, and every
/// descendant of those that left the group (a new session).
///
/// A process that exits while it is being read is left out, not an error,
/// and a group that no longer exists gives a sample with `processes == 0`
/// and every figure 0: a sampler running past the server's end keeps going.
/// Errors are only a `pgid` that cannot be a group (<= 0; group 0 would
/// match kernel threads) and an unreadable /proc.
///
/// CPU counts each process's own time plus that of its children it has
/// waited for (`cutime`, `cstime`), so a worker that exits and is reaped by
/// the server keeps counting. CPU of an exited process is lost from the sum
/// when whoever reaps it is outside the group (an orphan adopted by init, or
/// the leader itself). Its context switches are always lost (/proc keeps no
/// count for waited-for children), and its memory and threads are gone.
/// Callers take deltas over the measurement, so only time lost during it
/// matters. Reaping between the reads of two processes can count a child
/// twice or not at all in one sample; the next sample is right again.
pub fn sample_group(pgid: i32) -> io::Result<Sample> {
    if pgid <= 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a process group id: {pgid}"),
        ));
    }
    let page = page_size();
    let mut sum = Sample::default();
    let (mut user_ticks, mut sys_ticks) = (0u64, 0u64);
    // The stat file alone decides membership, so processes outside the
    // group cost one small read.
    let all: Vec<(u32, Stat)> = pids()?
        .filter_map(|pid| {
            let stat = parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)?;
            Some((pid, stat))
        })
        .collect();
    for (pid, stat) in members(pgid, &all) {
        let Some(p) = read_process(pid, stat, page) else {
            continue;
        };
        user_ticks += p.stat.utime + p.stat.cutime;
        sys_ticks += p.stat.stime + p.stat.cstime;
        sum.threads = sum
            .threads
            .saturating_add(u32::try_from(p.stat.num_threads).unwrap_or(u32::MAX));
        sum.rss_bytes += p.rss_bytes;
        sum.pss_bytes += p.pss_bytes;
        sum.voluntary_ctxt += p.voluntary_ctxt;
        sum.involuntary_ctxt += p.involuntary_ctxt;
        sum.processes += 1;
    }
    // Summed in ticks and divided once, so rounding does not add up.
    let tick = clock_ticks_per_s();
    sum.cpu_user_s = user_ticks as f64 / tick;
    sum.cpu_sys_s = sys_ticks as f64 / tick;
    Ok(sum)
}

/// One process's share of a sample.
struct Process {
    stat: Stat,
    rss_bytes: u64,
    pss_bytes: u64,
    voluntary_ctxt: u64,
    involuntary_ctxt: u64,
}

/// The processes of group `pgid` and every descendant of them, wherever it
/// went: a process that starts its own session leaves the group but not
/// the tree (each PostgreSQL backend calls setsid, so the postmaster's
/// group alone misses the backends that do the database's work).
fn members(pgid: i32, all: &[(u32, Stat)]) -> Vec<(u32, Stat)> {
    let mut inside: std::collections::HashSet<u32> = all
        .iter()
        .filter(|(_, s)| s.pgrp == pgid)
        .map(|&(pid, _)| pid)
        .collect();
    // A parent may come after its child in /proc's order: go round until
    // nothing is added (as deep as the tree, a few rounds).
    loop {
        let before = inside.len();
        for &(pid, s) in all {
            if !inside.contains(&pid) && inside.contains(&s.ppid) {
                inside.insert(pid);
            }
        }
        if inside.len() == before {
            break;
        }
    }
    all.iter()
        .filter(|(pid, _)| inside.contains(pid))
        .copied()
        .collect()
}

/// Reads the rest of one member process; None when it vanished between two
/// reads (a partial process is not counted).
fn read_process(pid: u32, stat: Stat, page: u64) -> Option<Process> {
    let (voluntary_ctxt, involuntary_ctxt) =
        parse_status(&fs::read_to_string(format!("/proc/{pid}/status")).ok()?);
    // smaps_rollup walks the process's page tables under its mmap lock: the
    // one read here that costs the server something, and the only source of
    // PSS. It needs ptrace-read access; without it, statm gives RSS only.
    let (rss_bytes, pss_bytes) = fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|t| parse_rollup(&t))
        .or_else(|| {
            let rss = parse_statm(&fs::read_to_string(format!("/proc/{pid}/statm")).ok()?)? * page;
            Some((rss, rss))
        })?;
    Some(Process {
        stat,
        rss_bytes,
        pss_bytes,
        voluntary_ctxt,
        involuntary_ctxt,
    })
}

/// Every process id in /proc at the time of reading.
pub(crate) fn pids() -> io::Result<impl Iterator<Item = u32>> {
    Ok(fs::read_dir("/proc")?
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok())))
}

/// The process group of `pid`; None when it is gone or unreadable.
pub(crate) fn process_group(pid: u32) -> Option<i32> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?).map(|s| s.pgrp)
}

/// The fields of /proc/<pid>/stat that a sample uses.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stat {
    ppid: u32,
    pgrp: i32,
    utime: u64,
    stime: u64,
    cutime: u64,
    cstime: u64,
    num_threads: u64,
}

/// Parses a /proc/<pid>/stat line. The command name (field 2) is in
/// parentheses and may itself hold spaces and ')', so the fields are counted
/// from after the last ')'.
fn parse_stat(line: &str) -> Option<Stat> {
    let (_, rest) = line.rsplit_once(')')?;
    // rest[0] is field 3 (state), so field k is rest[k - 3].
    let rest: Vec<&str> = rest.split_whitespace().collect();
    let field = |k: usize| rest.get(k - 3).copied();
    let num = |k: usize| field(k)?.parse::<u64>().ok();
    // cutime and cstime are signed in the kernel's format; never negative.
    let signed = |k: usize| Some(field(k)?.parse::<i64>().ok()?.max(0) as u64);
    Some(Stat {
        ppid: field(4)?.parse().ok()?,
        pgrp: field(5)?.parse().ok()?,
        utime: num(14)?,
        stime: num(15)?,
        cutime: signed(16)?,
        cstime: signed(17)?,
        num_threads: num(20)?,
    })
}

/// Voluntary and involuntary context switches from /proc/<pid>/status; 0 for
/// a line the kernel does not write.
fn parse_status(text: &str) -> (u64, u64) {
    let (mut voluntary, mut involuntary) = (0, 0);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let slot = match key {
            "voluntary_ctxt_switches" => &mut voluntary,
            "nonvoluntary_ctxt_switches" => &mut involuntary,
            _ => continue,
        };
        *slot = value.trim().parse().unwrap_or(0);
    }
    (voluntary, involuntary)
}

/// Rss and Pss in bytes from /proc/<pid>/smaps_rollup; None without both
/// (a zombie's file is empty).
fn parse_rollup(text: &str) -> Option<(u64, u64)> {
    let (mut rss, mut pss) = (None, None);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let slot = match key {
            "Rss" => &mut rss,
            "Pss" => &mut pss,
            _ => continue,
        };
        let kb: u64 = value.trim().strip_suffix("kB")?.trim().parse().ok()?;
        *slot = Some(kb * 1024);
    }
    Some((rss?, pss?))
}

/// Resident pages (the second field) of /proc/<pid>/statm.
fn parse_statm(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

fn clock_ticks_per_s() -> f64 {
    // SAFETY: sysconf reads a constant of the system; no memory is involved.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    // Linux has reported 100 to user space for decades; a failure is not
    // worth an error.
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

fn page_size() -> u64 {
    // SAFETY: as in clock_ticks_per_s.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as u64
    } else {
        4096
    }
}

/// Samples a process group on a background thread until stopped.
///
/// Dropping a Sampler without [`Sampler::stop`] also ends its thread (after
/// one last sample), but the samples are lost.
pub struct Sampler {
    stop: Sender<()>,
    thread: JoinHandle<Vec<Sample>>,
    started: Instant,
}

impl Sampler {
    /// Starts sampling group `pgid` now and then every `every` (at least
    /// 1 ms; [`DEFAULT_EVERY`] is the usual choice). At most [`MAX_SAMPLES`]
    /// are kept: see there for what happens on long runs.
    pub fn start(pgid: i32, every: Duration) -> Sampler {
        let (stop, stopped) = mpsc::channel();
        let every = every.max(MIN_EVERY);
        let started = Instant::now();
        let thread = thread::Builder::new()
            .name(format!("sampler-{pgid}"))
            .spawn(move || run(pgid, every, started, stopped))
            .expect("cannot start the sampler thread");
        Sampler {
            stop,
            thread,
            started,
        }
    }

    /// The instant sample times (`t_s`) count from.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Stops sampling and returns the samples in time order, the last one
    /// taken now.
    pub fn stop(self) -> Vec<Sample> {
        let Sampler { stop, thread, .. } = self;
        let _ = stop.send(());
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

fn run(pgid: i32, mut every: Duration, started: Instant, stopped: Receiver<()>) -> Vec<Sample> {
    let take = || {
        let t_s = started.elapsed().as_secs_f64();
        // An error here is /proc itself failing; a gap in the series says so
        // better than a made-up sample.
        sample_group(pgid).ok().map(|s| Sample { t_s, ..s })
    };
    let mut samples = Vec::new();
    let mut next = started;
    loop {
        // Waiting on the channel rather than sleeping lets stop() return
        // at once instead of up to one interval later.
        match stopped.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                if let Some(s) = take() {
                    keep(&mut samples, &mut every, s, MAX_SAMPLES);
                }
                return samples;
            }
        }
        if let Some(s) = take() {
            keep(&mut samples, &mut every, s, MAX_SAMPLES);
        }
        next += every;
        // Behind schedule (a starved thread, a slow /proc): skip the missed
        // ticks instead of sampling in a burst to catch up.
        let now = Instant::now();
        if next < now {
            next = now;
        }
    }
}

/// Appends `s`, first halving a full series (keeping the even-indexed
/// samples, so the first one stays) and doubling the interval so the samples
/// still to come keep the new, even spacing.
fn keep(samples: &mut Vec<Sample>, every: &mut Duration, s: Sample, cap: usize) {
    if samples.len() >= cap {
        let mut i = 0;
        samples.retain(|_| {
            i += 1;
            i % 2 == 1
        });
        *every *= 2;
    }
    samples.push(s);
}

/// What a server used over a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// User plus system.
    pub cpu_s: f64,
    pub peak_rss_bytes: u64,
    pub peak_pss_bytes: u64,
    pub max_threads: u64,
    pub voluntary_ctxt: u64,
    pub involuntary_ctxt: u64,
}

/// The use over `samples`: deltas from the first to the last sample for the
/// cumulative counters, peaks for memory and threads. Samples of a vanished
/// group (`processes == 0`) are left out, so a server that died mid-run is
/// measured up to its last sample. None when no sample saw the group.
///
/// A delta is floored at 0: a cumulative sum falls when a process's time is
/// lost (see [`sample_group`]), and less than nothing is never right.
pub fn usage(samples: &[Sample]) -> Option<Usage> {
    let mut seen = samples.iter().filter(|s| s.processes > 0);
    let first = seen.next()?;
    let mut last = first;
    let (mut rss, mut pss, mut threads) =
        (first.rss_bytes, first.pss_bytes, u64::from(first.threads));
    for s in seen {
        rss = rss.max(s.rss_bytes);
        pss = pss.max(s.pss_bytes);
        threads = threads.max(u64::from(s.threads));
        last = s;
    }
    let cpu_user_s = (last.cpu_user_s - first.cpu_user_s).max(0.0);
    let cpu_sys_s = (last.cpu_sys_s - first.cpu_sys_s).max(0.0);
    Some(Usage {
        cpu_user_s,
        cpu_sys_s,
        cpu_s: cpu_user_s + cpu_sys_s,
        peak_rss_bytes: rss,
        peak_pss_bytes: pss,
        max_threads: threads,
        voluntary_ctxt: last.voluntary_ctxt.saturating_sub(first.voluntary_ctxt),
        involuntary_ctxt: last.involuntary_ctxt.saturating_sub(first.involuntary_ctxt),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, Stdio};

    /// A child started as the leader of its own process group; the whole
    /// group is killed on drop, also when a test fails.
    struct Group {
        child: Child,
        killed: bool,
    }

    impl Group {
        fn spawn(script: &str) -> Group {
            Group::command(Command::new("sh").args(["-c", script]))
        }

        fn command(cmd: &mut Command) -> Group {
            let child = cmd
                .stdin(Stdio::null())
                .process_group(0)
                .spawn()
                .expect("spawn test child");
            Group {
                child,
                killed: false,
            }
        }

        fn pgid(&self) -> i32 {
            self.child.id() as i32
        }

        /// Samples until `done` holds; panics after a generous bound, which
        /// is a failure to happen, not a timing measurement.
        fn sample_until(&self, done: impl Fn(&Sample) -> bool) -> Sample {
            let until = Instant::now() + Duration::from_secs(30);
            loop {
                let s = sample_group(self.pgid()).unwrap();
                if done(&s) {
                    return s;
                }
                assert!(Instant::now() < until, "never happened; last {s:?}");
                thread::sleep(Duration::from_millis(20));
            }
        }

        fn kill(&mut self) {
            // Once only: after the wait the group id may be reused.
            if !self.killed {
                // SAFETY: signalling the process group this test created.
                unsafe { libc::kill(-self.pgid(), libc::SIGKILL) };
                let _ = self.child.wait();
                self.killed = true;
            }
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            self.kill();
        }
    }

    fn stat_line(comm: &str) -> String {
        // Fields 3.. of a real line: state S, ppid 1, pgrp 123, session 123,
        // ..., utime 7 (14), stime 8 (15), cutime 9 (16), cstime 10 (17),
        // priority 20, nice 0, num_threads 4 (20), ...
        format!(
            "123 ({comm}) S 1 123 123 0 -1 4194560 100 0 0 0 7 8 9 10 20 0 4 0 \
             5000 10000000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 \
             0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        )
    }

    #[test]
    fn parses_stat_whatever_the_command_name() {
        let want = Stat {
            ppid: 1,
            pgrp: 123,
            utime: 7,
            stime: 8,
            cutime: 9,
            cstime: 10,
            num_threads: 4,
        };
        for comm in ["sleep", "a b) c", "(x) S 9 9 9", ")", "a)b)", ""] {
            assert_eq!(parse_stat(&stat_line(comm)), Some(want), "comm {comm:?}");
        }
        assert_eq!(parse_stat("123 (cut) S 1 123"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn members_are_the_group_and_every_descendant_that_left_it() {
        let proc = |ppid: u32, pgrp: i32| Stat {
            ppid,
            pgrp,
            utime: 0,
            stime: 0,
            cutime: 0,
            cstime: 0,
            num_threads: 1,
        };
        // 50 leads group 50; 51 is its worker; 60 is a backend that called
        // setsid (its own group), 61 a child of that backend; 62 is listed
        // before its parent 63, which left the group from 51; 70 and 71 are
        // strangers, 71 in a group of its own under init.
        let all = [
            (62, proc(63, 62)),
            (50, proc(1, 50)),
            (51, proc(50, 50)),
            (60, proc(50, 60)),
            (61, proc(60, 60)),
            (63, proc(51, 63)),
            (70, proc(1, 70)),
            (71, proc(1, 71)),
        ];
        let mut got: Vec<u32> = members(50, &all).iter().map(|&(p, _)| p).collect();
        got.sort_unstable();
        assert_eq!(got, [50, 51, 60, 61, 62, 63]);
        // A group whose leader is gone still finds its members' children.
        let orphaned = [(51, proc(1, 50)), (60, proc(51, 60)), (70, proc(1, 70))];
        let got: Vec<u32> = members(50, &orphaned).iter().map(|&(p, _)| p).collect();
        assert_eq!(got, [51, 60]);
        assert!(members(99, &all).is_empty());
    }

    #[test]
    fn parses_status_rollup_and_statm() {
        let status = "Name:\tsleep\nThreads:\t1\nvoluntary_ctxt_switches:\t12\n\
                      nonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_status(status), (12, 3));
        assert_eq!(parse_status("Name:\tx\n"), (0, 0));
        let rollup = "5636b3a32000-7ffeee76f000 ---p 00000000 00:00 0    [rollup]\n\
                      Rss:                1620 kB\nPss:                 295 kB\n\
                      Pss_Dirty:           116 kB\n";
        assert_eq!(parse_rollup(rollup), Some((1620 * 1024, 295 * 1024)));
        assert_eq!(parse_rollup(""), None);
        assert_eq!(parse_statm("2000 350 200 10 0 150 0\n"), Some(350));
    }

    #[test]
    fn samples_a_busy_child() {
        let busy = Group::spawn("while :; do :; done");
        let s = busy.sample_until(|s| s.cpu_user_s + s.cpu_sys_s > 0.0);
        assert_eq!(s.processes, 1, "{s:?}");
        assert!(
            s.threads >= 1 && s.rss_bytes > 0 && s.pss_bytes > 0,
            "{s:?}"
        );
        assert!(s.pss_bytes <= s.rss_bytes, "{s:?}");
        assert_eq!(s.t_s, 0.0);
        let first = s.cpu_user_s + s.cpu_sys_s;
        busy.sample_until(|s| s.cpu_user_s + s.cpu_sys_s > first);
    }

    #[test]
    fn counts_forked_processes() {
        let group = Group::spawn("sleep 60 & sleep 60");
        let s = group.sample_until(|s| s.processes >= 2);
        assert!(s.threads >= 2 && s.rss_bytes > 0, "{s:?}");
    }

    #[test]
    fn keeps_cpu_of_reaped_children() {
        // The subshell burns CPU and exits; the shell reaps it, then becomes
        // `sleep`, whose own CPU is next to nothing.
        let group =
            Group::spawn("(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done); exec sleep 60");
        let comm = format!("/proc/{}/comm", group.pgid());
        let s =
            group.sample_until(|_| fs::read_to_string(&comm).is_ok_and(|c| c.trim() == "sleep"));
        assert_eq!(s.processes, 1, "{s:?}");
        assert!(s.cpu_user_s + s.cpu_sys_s >= 0.02, "{s:?}");
    }

    #[test]
    fn counts_a_child_that_started_its_own_session() {
        // As a PostgreSQL backend does: the child leaves the group (setsid)
        // and stays the leader's child.
        let file = std::env::temp_dir().join(format!("netbench-setsid-{}", std::process::id()));
        let group = Group::spawn(&format!(
            "setsid sleep 30 & echo $! > {}; exec sleep 31",
            file.display()
        ));
        let written = || fs::read_to_string(&file).is_ok_and(|t| t.ends_with('\n'));
        let s = group.sample_until(|s| s.processes == 2 && written());
        let child: i32 = fs::read_to_string(&file).unwrap().trim().parse().unwrap();
        let child_group = process_group(child as u32);
        // SAFETY: kill with a pid this test started.
        unsafe { libc::kill(child, libc::SIGKILL) };
        let _ = fs::remove_file(&file);
        assert_eq!(s.processes, 2, "{s:?}");
        assert_eq!(child_group, Some(child), "the child leads its own group");
    }

    #[test]
    fn reads_a_command_name_with_spaces_and_parentheses() {
        let dir = std::env::temp_dir().join(format!("netbench-sampler-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let odd = dir.join("a b) (c");
        let _ = fs::remove_file(&odd);
        std::os::unix::fs::symlink("/bin/sleep", &odd).unwrap();
        let group = Group::command(Command::new(&odd).arg("60"));
        let comm = format!("/proc/{}/comm", group.pgid());
        let s =
            group.sample_until(|_| fs::read_to_string(&comm).is_ok_and(|c| c.trim() == "a b) (c"));
        assert_eq!(s.processes, 1, "{s:?}");
        drop(group);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_vanished_group_is_an_empty_sample() {
        let mut gone = Group::spawn("exec sleep 60");
        gone.kill();
        assert_eq!(sample_group(gone.pgid()).unwrap(), Sample::default());
        assert_eq!(
            sample_group(0).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );

        let sampler = Sampler::start(gone.pgid(), Duration::from_millis(5));
        thread::sleep(Duration::from_millis(30));
        let samples = sampler.stop();
        assert!(!samples.is_empty());
        assert!(samples.iter().all(|s| s.processes == 0));
        assert_eq!(usage(&samples), None);
    }

    #[test]
    fn sampler_runs_until_stopped() {
        let group = Group::spawn("exec sleep 60");
        let sampler = Sampler::start(group.pgid(), Duration::from_millis(10));
        thread::sleep(Duration::from_millis(100));
        let samples = sampler.stop();
        assert!(samples.len() >= 2, "{samples:?}");
        assert!(samples.windows(2).all(|w| w[0].t_s <= w[1].t_s));
        assert!(samples.iter().all(|s| s.processes == 1));
        let u = usage(&samples).unwrap();
        assert!(u.peak_rss_bytes > 0 && u.max_threads >= 1, "{u:?}");
    }

    #[test]
    fn halves_a_full_series() {
        // As run() does: a sample at each tick, the next tick one interval on.
        let mut samples = Vec::new();
        let mut every = Duration::from_millis(100);
        let mut t = Duration::ZERO;
        for _ in 0..20 {
            let s = Sample {
                t_s: t.as_secs_f64(),
                ..Sample::default()
            };
            keep(&mut samples, &mut every, s, 4);
            assert!(samples.len() <= 4);
            t += every;
        }
        // Halved at every other tick from the 5th on (a cap of 4 leaves room
        // for two more): 8 times, with the first sample kept and the spacing
        // even.
        assert_eq!(every, Duration::from_millis(100 << 8));
        let t: Vec<f64> = samples.iter().map(|s| s.t_s).collect();
        let want: Vec<f64> = [0, 1, 2, 3].map(|k| (every * k).as_secs_f64()).to_vec();
        assert_eq!(t, want);
    }

    #[test]
    fn usage_takes_deltas_and_peaks() {
        let at = |t_s, cpu, rss, threads, ctxt, processes| Sample {
            t_s,
            cpu_user_s: cpu,
            cpu_sys_s: cpu / 2.0,
            rss_bytes: rss,
            pss_bytes: rss / 2,
            threads,
            voluntary_ctxt: ctxt,
            involuntary_ctxt: ctxt / 10,
            processes,
        };
        let samples = [
            at(0.0, 0.0, 0, 0, 0, 0),
            at(0.1, 1.0, 100, 2, 100, 1),
            at(0.2, 2.0, 300, 8, 150, 3),
            at(0.3, 4.0, 200, 4, 300, 2),
            at(0.4, 0.0, 0, 0, 0, 0),
        ];
        let u = usage(&samples).unwrap();
        assert_eq!(
            u,
            Usage {
                cpu_user_s: 3.0,
                cpu_sys_s: 1.5,
                cpu_s: 4.5,
                peak_rss_bytes: 300,
                peak_pss_bytes: 150,
                max_threads: 8,
                voluntary_ctxt: 200,
                involuntary_ctxt: 20,
            }
        );
        // A sum that fell (a worker's time lost) gives 0, not less.
        let fell = [at(0.0, 5.0, 1, 1, 50, 2), at(0.1, 4.0, 1, 1, 40, 1)];
        let u = usage(&fell).unwrap();
        assert_eq!((u.cpu_s, u.voluntary_ctxt), (0.0, 0));
        assert_eq!(usage(&[]), None);
    }

    #[test]
    fn sample_serializes() {
        let s = Sample {
            t_s: 1.5,
            cpu_user_s: 0.25,
            processes: 2,
            ..Sample::default()
        };
        let text = serde_json::to_string(&s).unwrap();
        // The stored field names are a format: a rename would orphan old rows.
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["t_s"], 1.5);
        assert_eq!(json["cpu_user_s"], 0.25);
        assert_eq!(json["processes"], 2);
        let back: Sample = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
    }
}
