//! Loads too big for one process: the connections split over child
//! processes of this same program, each with its own open-file limit,
//! started at one wall-clock time, and merged exactly from the histogram
//! files they write. A child is this program run with the user's own
//! arguments and its part named in the environment, so it resolves the same
//! plan (the same generated documents, by the parent's seed) and takes its
//! share.

use std::io::{IsTerminal, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use netbench_engine::{merge_parts, read_part, LoadPlan, LoadResult, Pacing, Part, Stop};

use crate::start_at::unix_ns;

const ENV_PART: &str = "NETBENCH_PART";
const ENV_OUT: &str = "NETBENCH_PART_OUT";
const ENV_START: &str = "NETBENCH_PART_START_NS";
const ENV_SEED: &str = "NETBENCH_PART_SEED";

/// Time the children get to start and build their plans before the common
/// start, when the user gave no --start-at.
pub(crate) const LEAD: Duration = Duration::from_secs(2);

/// What a child was told by its parent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Role {
    pub index: usize,
    pub of: usize,
    pub out: PathBuf,
    pub start: SystemTime,
    pub seed: Option<u64>,
}

impl Role {
    pub(crate) fn label(&self) -> String {
        format!("process {}/{}", self.index + 1, self.of)
    }
}

/// The role this process was started in, if it is a child.
pub(crate) fn role_from_env() -> Result<Option<Role>> {
    let Ok(part) = std::env::var(ENV_PART) else {
        return Ok(None);
    };
    let bad = || {
        format!("{ENV_PART}={part} is not `i/k`; it is set by netbench for its own child processes")
    };
    let (i, k) = part.split_once('/').with_context(bad)?;
    let (index, of): (usize, usize) = (i.parse().with_context(bad)?, k.parse().with_context(bad)?);
    if of == 0 || index >= of {
        bail!(bad());
    }
    let out =
        PathBuf::from(std::env::var(ENV_OUT).with_context(|| format!("{ENV_OUT} is not set"))?);
    let start_ns: u64 = std::env::var(ENV_START)
        .with_context(|| format!("{ENV_START} is not set"))?
        .parse()
        .with_context(|| format!("{ENV_START} is not a number"))?;
    let seed = match std::env::var(ENV_SEED) {
        Ok(s) => Some(
            s.parse()
                .with_context(|| format!("{ENV_SEED} is not a number"))?,
        ),
        Err(_) => None,
    };
    Ok(Some(Role {
        index,
        of,
        out,
        start: UNIX_EPOCH + Duration::from_nanos(start_ns),
        seed,
    }))
}

/// Processes `connections` need when each holds at most `per_process`.
pub(crate) fn processes_needed(connections: usize, per_process: u64) -> usize {
    (connections as u64).div_ceil(per_process.max(1)).max(1) as usize
}

/// `total` split in `of` near-equal shares; share `index`, and the sum of
/// the shares before it.
fn share(total: u64, index: usize, of: usize) -> (u64, u64) {
    let (k, i) = (of as u64, index as u64);
    let base = total / k;
    let extra = total % k;
    let mine = base + u64::from(i < extra);
    let before = base * i + i.min(extra);
    (mine, before)
}

/// Part `index` of `of` of a plan: its share of the connections, the
/// workers, an exact count and an open-loop rate, with the source addresses
/// turned so they keep going round-robin across the parts.
pub(crate) fn part_plan(plan: &LoadPlan, index: usize, of: usize) -> LoadPlan {
    let (connections, first_conn) = share(plan.connections as u64, index, of);
    let connections = connections as usize;
    let mut part = plan.clone();
    part.connections = connections;
    // The run's workers in all, spread like the connections (`-t 8` over 6
    // processes: two of 2 and four of 1), so every CPU given is used; a
    // process needs one even when there are fewer workers than processes.
    part.workers = (share(plan.workers as u64, index, of).0 as usize).clamp(1, connections.max(1));
    if let Stop::Count(n) = plan.stop {
        part.stop = Stop::Count(share(n, index, of).0);
    }
    if let Pacing::Open { per_second } = plan.pacing {
        part.pacing = Pacing::Open {
            per_second: per_second * connections as f64 / plan.connections as f64,
        };
    }
    if !part.sources.is_empty() {
        let turn = first_conn as usize % part.sources.len();
        part.sources.rotate_left(turn);
    }
    part
}

/// Removes the parts' folder however the parent ends.
struct PartsDir(PathBuf);

impl Drop for PartsDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn parts_dir() -> Result<PartsDir> {
    let nanos = unix_ns(SystemTime::now());
    let dir = std::env::temp_dir().join(format!("netbench-parts-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(PartsDir(dir))
}

fn spawn(role: &Role, seed: Option<u64>) -> Result<Child> {
    let exe =
        std::env::current_exe().context("finding netbench's own program to start its parts")?;
    let mut cmd = Command::new(exe);
    cmd.args(std::env::args_os().skip(1))
        .env(ENV_PART, format!("{}/{}", role.index, role.of))
        .env(ENV_OUT, &role.out)
        .env(ENV_START, unix_ns(role.start).to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if let Some(seed) = seed {
        cmd.env(ENV_SEED, seed.to_string());
    }
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork
    // and exec. A child outliving a killed parent would load the server
    // with nobody to read its result.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    cmd.spawn()
        .with_context(|| format!("starting {}", role.label()))
}

/// What the parent's line on stderr says while the parts run.
fn phase(start: SystemTime, plan: &LoadPlan) -> String {
    let now = SystemTime::now();
    match now.duration_since(start) {
        Err(e) => format!("starting in {:.1}s", e.duration().as_secs_f64()),
        Ok(t) if t < plan.warmup => format!("warming up {:.1}s", t.as_secs_f64()),
        Ok(t) => match plan.stop {
            Stop::After(d) => format!(
                "measuring {:.1}s of {:.1}s",
                (t - plan.warmup).as_secs_f64().min(d.as_secs_f64()),
                d.as_secs_f64()
            ),
            Stop::Count(_) => format!("measuring {:.1}s", (t - plan.warmup).as_secs_f64()),
        },
    }
}

/// Runs `plan` as `of` child processes starting at `start`, and merges
/// their results. A cancel is passed on to the children, whose partial
/// results are merged all the same.
pub(crate) fn run_parts(
    plan: &LoadPlan,
    of: usize,
    start: SystemTime,
    seed: Option<u64>,
    cancel: &AtomicBool,
    show_progress: bool,
) -> Result<LoadResult> {
    let dir = parts_dir()?;
    let roles: Vec<Role> = (0..of)
        .map(|index| Role {
            index,
            of,
            out: dir.0.join(format!("part-{index}.hlog")),
            start,
            seed,
        })
        .collect();
    let mut children = Vec::with_capacity(of);
    for role in &roles {
        match spawn(role, seed) {
            Ok(c) => children.push(c),
            Err(e) => {
                for c in &mut children {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(e);
            }
        }
    }
    let progress = show_progress && std::io::stderr().is_terminal();
    let mut statuses = vec![None; of];
    let mut forwarded = false;
    while statuses.iter().any(Option::is_none) {
        if cancel.load(Ordering::Relaxed) && !forwarded {
            for c in &children {
                // SAFETY: signalling our own child, which has not been
                // reaped while its status is None, so its pid is still its.
                unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGINT) };
            }
            forwarded = true;
        }
        for (c, s) in children.iter_mut().zip(statuses.iter_mut()) {
            if s.is_none() {
                *s = c.try_wait().context("waiting for a part")?;
            }
        }
        if progress {
            let done = statuses.iter().filter(|s| s.is_some()).count();
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r\x1b[K{of} processes: {}{}",
                phase(start, plan),
                if done > 0 {
                    format!(", {done} done")
                } else {
                    String::new()
                }
            );
            let _ = err.flush();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if progress {
        eprint!("\r\x1b[K");
    }
    let mut parts = Vec::with_capacity(of);
    for (role, status) in roles.iter().zip(&statuses) {
        parts.push(Part {
            label: role.label(),
            result: read_result(&role.out, role, status.as_ref())?,
        });
    }
    Ok(merge_parts(
        parts,
        plan.reconnect,
        matches!(plan.stop, Stop::Count(_)),
        plan.streams_per_connection(),
    )?)
}

fn read_result(
    path: &Path,
    role: &Role,
    status: Option<&std::process::ExitStatus>,
) -> Result<LoadResult> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "{} ended ({}) without a result; its messages are above",
            role.label(),
            status.map_or("status unknown".to_string(), ToString::to_string)
        )
    })?;
    let part =
        read_part(&bytes).with_context(|| format!("reading the result of {}", role.label()))?;
    Ok(part.result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn plan(connections: usize, workers: usize) -> LoadPlan {
        LoadPlan {
            addr: "127.0.0.1:1".parse().unwrap(),
            connections,
            workers,
            stop: Stop::Count(1_000_003),
            pacing: Pacing::Closed,
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(5),
            keepalive: true,
            pipeline: 1,
            requests_per_connection: None,
            reconnect: true,
            requests: Vec::new(),
            ws: None,
            sources: (1..=8).map(|i| IpAddr::from([127, 0, 0, i])).collect(),
            io: Default::default(),
            tls: None,
            session: None,
            h2: false,
        }
    }

    #[test]
    fn shares_add_up_exactly() {
        let p = plan(100_000, 2);
        let parts: Vec<LoadPlan> = (0..6).map(|i| part_plan(&p, i, 6)).collect();
        assert_eq!(parts.iter().map(|q| q.connections).sum::<usize>(), 100_000);
        assert_eq!(parts[0].connections, 16_667);
        assert_eq!(parts[5].connections, 16_666);
        let counts: u64 = parts
            .iter()
            .map(|q| match q.stop {
                Stop::Count(n) => n,
                Stop::After(_) => 0,
            })
            .sum();
        assert_eq!(counts, 1_000_003);
        assert!(
            parts.iter().all(|q| q.workers == 1),
            "2 workers over 6 parts"
        );
    }

    #[test]
    fn the_workers_given_are_all_used_across_the_processes() {
        let p = plan(100_000, 8);
        let workers: Vec<usize> = (0..6).map(|i| part_plan(&p, i, 6).workers).collect();
        assert_eq!(workers, vec![2, 2, 1, 1, 1, 1]);
        assert_eq!(workers.iter().sum::<usize>(), 8);
        // Fewer workers than processes: each process still has one.
        let p = plan(100_000, 2);
        assert!((0..6).all(|i| part_plan(&p, i, 6).workers == 1));
        // A part never has more workers than connections.
        let p = plan(3, 8);
        assert_eq!(part_plan(&p, 0, 3).workers, 1);
    }

    #[test]
    fn sources_keep_their_round_robin_across_parts() {
        // Part 1 starts at connection 16,667: 16,667 % 8 = 3, so its first
        // connection takes the fourth address, as it would in one process.
        let p = plan(100_000, 1);
        let second = part_plan(&p, 1, 6);
        assert_eq!(second.sources[0], IpAddr::from([127, 0, 0, 4]));
        assert_eq!(second.sources.len(), 8);
    }

    #[test]
    fn open_loop_rate_is_split_by_connections() {
        let mut p = plan(10, 4);
        p.pacing = Pacing::Open { per_second: 1000.0 };
        let rates: Vec<f64> = (0..3)
            .map(|i| match part_plan(&p, i, 3).pacing {
                Pacing::Open { per_second } => per_second,
                Pacing::Closed => 0.0,
            })
            .collect();
        assert_eq!(rates, vec![400.0, 300.0, 300.0]);
    }

    #[test]
    fn processes_follow_the_file_limit() {
        assert_eq!(processes_needed(1, 19_936), 1);
        assert_eq!(processes_needed(19_936, 19_936), 1);
        assert_eq!(processes_needed(19_937, 19_936), 2);
        assert_eq!(processes_needed(100_000, 19_936), 6);
    }
}
