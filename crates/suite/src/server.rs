//! A server process under test: built in its folder, started in a process
//! group of its own on a given port, ready when a contract request succeeds,
//! and stopped (SIGTERM, then SIGKILL of its whole process tree: the group
//! and every process that left it, see [`crate::tree`]) however the caller
//! ends, even if the caller itself dies.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use netbench_contract::Client;

use crate::manifest::ServerManifest;
use crate::placement::cpu_set;
use crate::tree::{Adopted, Tree};

/// How much of a failing build's or server's output a message shows.
const TAIL: usize = 2000;
/// The longest one readiness poll waits for its answer.
const POLL_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
pub struct BuildReport {
    pub duration: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("could not run the {step} of {name}: {source}; is its toolchain installed (see its server.toml)?")]
    Spawn {
        name: String,
        step: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("the {step} of {name} failed ({status}); its whole output is in {log}, the last of it:\n{tail}")]
    Failed {
        name: String,
        step: &'static str,
        status: String,
        log: String,
        tail: String,
    },
    #[error("the {step} of {name} took longer than {after:?} and was stopped; raise `{step_key}_timeout` in its server.toml if it needs longer; its output is in {log}, the last of it:\n{tail}")]
    TimedOut {
        name: String,
        step: &'static str,
        step_key: &'static str,
        after: Duration,
        log: String,
        tail: String,
    },
    #[error("the {step} of {name} was stopped by a cancel")]
    Cancelled { name: String, step: &'static str },
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("could not start {name}: {source}")]
    Spawn {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{name} exited before it was ready ({status}); its last output:\n{tail}")]
    Exited {
        name: String,
        status: String,
        tail: String,
    },
    #[error("{name} was not ready within {waited:?} (GET /blank never answered 200); its last output:\n{tail}")]
    NotReady {
        name: String,
        waited: Duration,
        tail: String,
    },
}

/// The last [`TAIL`] bytes of the file at `path`.
fn file_tail(path: &Path) -> String {
    let mut text = Vec::new();
    if let Ok(mut f) = File::open(path) {
        let len = f.metadata().map_or(0, |m| m.len());
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(TAIL as u64)));
        let _ = f.read_to_end(&mut text);
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// Runs the manifest's build command in `dir` (nothing when it is empty),
/// within its `build_timeout`; setting `cancel` stops it.
pub fn build(
    dir: &Path,
    m: &ServerManifest,
    cancel: &AtomicBool,
) -> Result<BuildReport, BuildError> {
    run_step(dir, m, Step::Build, cancel)
}

/// Runs the manifest's test command in `dir` (nothing when it is empty),
/// within its `test_timeout`; setting `cancel` stops it.
pub fn run_tests(
    dir: &Path,
    m: &ServerManifest,
    cancel: &AtomicBool,
) -> Result<BuildReport, BuildError> {
    run_step(dir, m, Step::Test, cancel)
}

#[derive(Clone, Copy)]
enum Step {
    Build,
    Test,
}

fn run_step(
    dir: &Path,
    m: &ServerManifest,
    step: Step,
    cancel: &AtomicBool,
) -> Result<BuildReport, BuildError> {
    let (what, key, command, timeout) = match step {
        Step::Build => ("build", "build", &m.build, m.build_timeout()),
        Step::Test => ("tests", "test", &m.test, m.test_timeout()),
    };
    let started = Instant::now();
    if command.trim().is_empty() {
        return Ok(BuildReport {
            duration: Duration::ZERO,
        });
    }
    let spawn_err = |source| BuildError::Spawn {
        name: m.name.clone(),
        step: what,
        source,
    };
    // Output streams to a file, not to memory: a chatty build of an hour
    // costs disk, and only its tail is read back.
    let (log, out) = crate::logs::create(&format!("{}-{key}", m.name)).map_err(spawn_err)?;
    let err = out.try_clone().map_err(spawn_err)?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    // A server's build puts its artefact where its manifest says (a Rust
    // server's target/release/…): a target folder set for netbench's own
    // build would move it elsewhere, and the server would not be found.
    for var in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"] {
        cmd.env_remove(var);
    }
    // A step may start a daemon that leaves its group (`setsid x &`): the
    // tree's mark finds it when the step ends.
    let mut tree = Tree::new();
    tree.mark(&mut cmd);
    // SAFETY: only async-signal-safe calls between fork and exec. Its own
    // group lets a timeout or cancel stop every process the step started.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    // Should netbench die during the step, the guard stops its tree; started
    // first, so that no moment after the spawn is unguarded.
    let mut guard = spawn_guard(None, Some(&tree), Cleanup::Nothing);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            stop_guard(&mut guard);
            return Err(spawn_err(e));
        }
    };
    let pgid = child.id() as libc::pid_t;
    tree.set_group(child.id());
    tell_group(&mut guard, child.id());
    let mut adopted = Adopted::default();
    let mut polls = 0u32;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break Some(status);
        }
        // Twice a second: the scan reads every process's environment.
        polls += 1;
        if polls.is_multiple_of(10) {
            tree.reap_exited(child.id(), &mut adopted);
        }
        let cancelled = cancel.load(Ordering::Relaxed);
        if cancelled || started.elapsed() > timeout {
            // SAFETY: signalling the process group this step created.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let _ = child.wait();
            if cancelled {
                return Err(BuildError::Cancelled {
                    name: m.name.clone(),
                    step: what,
                });
            }
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever the step left running, in its group or out of it, goes with
    // it; then the guard has nothing left to do.
    tree.kill_all(child.id());
    stop_guard(&mut guard);
    let failed = |status: Option<String>| {
        let tail = file_tail(&log);
        // Kept for the user, its end only: a chatty build once left 96 MB.
        let _ = crate::logs::keep(&log);
        let log = log.display().to_string();
        match status {
            Some(status) => BuildError::Failed {
                name: m.name.clone(),
                step: what,
                status,
                log,
                tail,
            },
            None => BuildError::TimedOut {
                name: m.name.clone(),
                step: what,
                step_key: key,
                after: timeout,
                log,
                tail,
            },
        }
    };
    match status {
        Some(s) if s.success() => {
            crate::logs::remove(&log);
            Ok(BuildReport {
                duration: started.elapsed(),
            })
        }
        Some(s) => Err(failed(Some(s.to_string()))),
        None => Err(failed(None)),
    }
}

/// A free port on 127.0.0.1 (bound, then released for the server to take).
///
/// Taken below the kernel's ephemeral range when it leaves room: a port the
/// kernel hands out (to `bind(:0)` or to a connection's own end, thousands of
/// which netbench's loads open) could be taken by any socket between this
/// check and the server's bind, and the server would exit with "address
/// already in use". Below the range only another explicit choice can take
/// it; each process starts at its own place and never offers a port twice
/// in a row.
pub fn free_port() -> std::io::Result<u16> {
    use std::sync::atomic::AtomicU32;
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let Some((low, high)) = below_ephemeral(
        &std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default(),
    ) else {
        return Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port());
    };
    let span = u32::from(high - low) + 1;
    let seed = std::process::id().wrapping_mul(2_654_435_761);
    let _ = NEXT.compare_exchange(u32::MAX, seed % span, Ordering::Relaxed, Ordering::Relaxed);
    for _ in 0..span.min(4096) {
        let port = low + (NEXT.fetch_add(1, Ordering::Relaxed) % span) as u16;
        if let Ok(l) = TcpListener::bind(("127.0.0.1", port)) {
            return Ok(l.local_addr()?.port());
        }
    }
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The ports from 10,000 up to just below the ephemeral range that
/// `ip_local_port_range` gives ("32768\t60999"), or None when that leaves
/// fewer than 1,000 (or the text is not a range).
fn below_ephemeral(range: &str) -> Option<(u16, u16)> {
    let mut it = range.split_whitespace().map(|v| v.parse::<u16>().ok());
    let first = it.next()??;
    const LOW: u16 = 10_000;
    (first >= LOW + 1_000).then(|| (LOW, first - 1))
}

/// How to start one server process.
#[derive(Debug, Clone)]
pub struct StartSpec {
    pub addr: SocketAddr,
    /// Appended to the manifest's run command (a variant's args, or the
    /// NetBenchmarks `/` mode).
    pub args: Vec<String>,
    /// Added to the environment (a variant's env).
    pub env: Vec<(String, String)>,
    /// CPUs the server may run on; `None` leaves it unpinned.
    pub cpus: Option<Vec<usize>>,
    /// The network namespace to start it in (its file, /run/netns/NAME);
    /// `None`: netbench's own.
    pub netns: Option<PathBuf>,
}

impl StartSpec {
    pub fn at(addr: SocketAddr) -> Self {
        StartSpec {
            addr,
            args: Vec::new(),
            env: Vec::new(),
            cpus: None,
            netns: None,
        }
    }
}

/// The shell text that runs `run` with the arguments after it. `exec` when
/// the command starts with a program, so the server is the group's leader
/// and its exit is seen at once; a command that starts with assignments
/// (`FOO=1 ./server`) keeps the shell as leader, since `exec FOO=1` is not a
/// command.
fn shell_line(run: &str) -> String {
    let first = run.split_whitespace().next().unwrap_or("");
    let assignment = first.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    // A line that already starts with `exec` is left as it is written.
    if assignment || first == "exec" {
        format!("{run} \"$@\"")
    } else {
        format!("exec {run} \"$@\"")
    }
}

/// Makes `cmd` start in a process group of its own (so a stop reaches every
/// process it starts), die with netbench before a guard is running, and run
/// on `cpus` when given.
pub(crate) fn in_own_group(cmd: &mut Command, cpus: Option<&[usize]>) {
    let set = cpus.map(cpu_set);
    // SAFETY: between fork and exec only async-signal-safe calls: setpgid,
    // prctl and sched_setaffinity on a set built before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if let Some(set) = &set {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// What a guard cleans up once netbench is gone.
pub(crate) enum Cleanup<'a> {
    Nothing,
    /// A private folder the group wrote in, removed after the group is
    /// killed.
    Folder(&'a Path),
    /// A network namespace and the host's end of its veth pair, deleted
    /// with `ip` (its path).
    Namespace {
        ip: &'a Path,
        name: &'a str,
        host_if: &'a str,
    },
}

/// Starts a shell blocked reading a pipe only this process writes to: when
/// this process ends, however it ends (SIGKILL included), the pipe closes
/// and the shell kills the process group `pgid` (when given, or told later
/// with [`tell_group`]) and every process carrying `tree`'s mark (when
/// given: daemons that left the group, which are init's once netbench is
/// gone), so nothing netbench started outlives it, then does `cleanup`.
/// Kill the guard (and reap it) once the tree is stopped and the clean-up
/// done by hand.
pub(crate) fn spawn_guard(
    pgid: Option<u32>,
    tree: Option<&Tree>,
    cleanup: Cleanup<'_>,
) -> Option<Child> {
    let mut guard = Command::new("sh");
    guard
        .arg("-c")
        // The pause lets the killed processes go before their folder does.
        // Deleting the veth's host end takes the other end with it at once.
        .arg(concat!(
            // A first line, if one comes, is the group (tell_group); the
            // end of the pipe is netbench's end.
            "read pg; read _; pg=${pg:-$1}; [ -z \"$pg\" ] || kill -9 -\"$pg\" 2>/dev/null; ",
            crate::tree::guard_kill_marked!(),
            "case \"$3\" in ",
            "folder) sleep 1; rm -rf -- \"$4\";; ",
            "netns) \"$4\" link del \"$6\" 2>/dev/null; \"$4\" netns del \"$5\" 2>/dev/null;; ",
            "esac"
        ))
        .arg("netbench-guard")
        .arg(pgid.map(|p| p.to_string()).unwrap_or_default())
        .arg(tree.map(Tree::token).unwrap_or_default());
    match cleanup {
        Cleanup::Nothing => guard.arg("nothing"),
        Cleanup::Folder(dir) => guard.arg("folder").arg(dir),
        Cleanup::Namespace { ip, name, host_if } => {
            guard.arg("netns").arg(ip).arg(name).arg(host_if)
        }
    };
    guard
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe. In a session of its own the guard
    // hears no signal meant for netbench's group or terminal (Ctrl-C, a
    // closed terminal's SIGHUP, `kill -9 -PGID`), so it outlives netbench
    // and does its one job.
    unsafe {
        guard.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    guard.spawn().ok()
}

/// Tells a guard started before its group existed which group to kill.
pub(crate) fn tell_group(guard: &mut Option<Child>, pgid: u32) {
    if let Some(stdin) = guard.as_mut().and_then(|g| g.stdin.as_mut()) {
        let _ = writeln!(stdin, "{pgid}");
    }
}

/// Stops a guard whose tree is stopped (or never started), so that it never
/// fires later at a group id that may have been reused.
pub(crate) fn stop_guard(guard: &mut Option<Child>) {
    if let Some(mut g) = guard.take() {
        let _ = g.kill();
        let _ = g.wait();
    }
}

/// Where a server's CPU seconds are read.
#[derive(Debug, Clone, PartialEq)]
pub enum CpuSource {
    /// Its cgroup's `cpu.stat`: microseconds, every thread and child ever.
    Cgroup(PathBuf),
    /// Its process tree's /proc times (the group id): 10 ms ticks, live
    /// processes only.
    Ticks(i32),
}

impl CpuSource {
    /// CPU seconds so far; None when it cannot be read (the server is gone).
    pub fn cpu_s(&self) -> Option<f64> {
        match self {
            CpuSource::Cgroup(stat) => std::fs::read_to_string(stat)
                .ok()
                .and_then(|t| crate::cgroup::usage_s(&t)),
            CpuSource::Ticks(pgid) => crate::sampler::sample_group(*pgid)
                .ok()
                .filter(|s| s.processes > 0)
                .map(|s| s.cpu_user_s + s.cpu_sys_s),
        }
    }

    /// "cgroup" or "ticks", for the record.
    pub fn as_str(&self) -> &'static str {
        match self {
            CpuSource::Cgroup(_) => "cgroup",
            CpuSource::Ticks(_) => "ticks",
        }
    }
}

/// A started server. Dropping it stops the whole process group.
pub struct RunningServer {
    pub name: String,
    pub addr: SocketAddr,
    child: Child,
    /// A shell blocked reading a pipe only this process writes to: when this
    /// process ends, however it ends, the pipe closes and the guard kills the
    /// server's whole group, so no server outlives netbench.
    guard: Option<Child>,
    /// The server's processes, in its group or out of it.
    tree: Tree,
    log: PathBuf,
    /// What the log dropped of its output (bounded while written).
    output: crate::logs::Captured,
    /// How it was started, for [`RunningServer::restart`].
    started_as: (PathBuf, ServerManifest, StartSpec),
    /// Its cgroup, which counts its CPU exactly (None where this machine
    /// gives none: /proc's ticks then). Declared after `child`: dropped
    /// once the tree is stopped.
    cpu_group: Option<crate::cgroup::CpuGroup>,
}

/// Starts the manifest's run command in `dir` with HOST and PORT set, in a
/// new process group (and in `spec.netns` when given), its output going to
/// a log file.
pub fn start(
    dir: &Path,
    m: &ServerManifest,
    spec: &StartSpec,
) -> Result<RunningServer, StartError> {
    let spawn_err = |source| StartError::Spawn {
        name: m.name.clone(),
        source,
    };
    let addr = spec.addr;
    // Through a pipe, bounded: a server's output may never stop.
    let (log, out, output) =
        crate::logs::capture(&format!("{}-{}", m.name, addr.port()), spec.cpus.as_deref())
            .map_err(spawn_err)?;
    let err = out.try_clone().map_err(spawn_err)?;
    let mut cmd = Command::new("sh");
    // The run command as written, arguments passed as arguments: never
    // pasted into the shell text, so `two words` stays one and `$(cmd)` is
    // not run.
    cmd.arg("-c")
        .arg(shell_line(&m.run))
        .arg("netbench-server")
        .args(&spec.args)
        .current_dir(dir)
        .env("HOST", addr.ip().to_string())
        .env("PORT", addr.port().to_string())
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    let mut tree = Tree::new();
    tree.mark(&mut cmd);
    in_own_group(&mut cmd, spec.cpus.as_deref());
    // Its CPU counted exactly, every thread and child included.
    let cpu_group = crate::cgroup::CpuGroup::create(&m.name);
    if let Some(entry) = cpu_group.as_ref().map(crate::cgroup::CpuGroup::entry) {
        // SAFETY: Entry::enter only opens, writes and closes a path made
        // before the fork.
        unsafe {
            cmd.pre_exec(move || {
                entry.enter();
                Ok(())
            });
        }
    }
    // Held open until the spawn, which joins the namespace through it.
    let netns = spec
        .netns
        .as_deref()
        .map(File::open)
        .transpose()
        .map_err(spawn_err)?;
    if let Some(ns) = &netns {
        crate::netns::enter(&mut cmd, ns);
    }
    // The guard first: a netbench killed between the spawn and a guard's
    // start would leave the server behind (seen once in the killed-group
    // test). Until it is told the group, it finds the server by its mark.
    let mut guard = spawn_guard(None, Some(&tree), Cleanup::Nothing);
    let child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            stop_guard(&mut guard);
            return Err(spawn_err(e));
        }
    };
    drop(netns);
    tree.set_group(child.id());
    tell_group(&mut guard, child.id());
    Ok(RunningServer {
        name: m.name.clone(),
        addr,
        child,
        guard,
        tree,
        log,
        output,
        started_as: (dir.to_path_buf(), m.clone(), spec.clone()),
        cpu_group,
    })
}

impl RunningServer {
    /// The end of what the server wrote to stdout and stderr.
    pub fn log_tail(&self) -> String {
        file_tail(&self.log)
    }

    /// Bytes of the server's output its log dropped so far (it keeps the
    /// first and last MiB): 0 when the log holds all of it.
    pub fn output_cut(&self) -> u64 {
        self.output.cut()
    }

    /// Where its output is logged while it runs (removed with it).
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Polls with a contract request until it succeeds; returns how long that
    /// took. No fixed sleeps: a short pause between failed attempts only.
    pub fn wait_ready(&mut self, deadline: Duration) -> Result<Duration, StartError> {
        let started = Instant::now();
        loop {
            // A fresh client each poll: one slow answer must not end the
            // polling, and no poll may outlast the deadline.
            let left = deadline.saturating_sub(started.elapsed());
            let client = Client::new(
                self.addr,
                left.clamp(Duration::from_millis(1), POLL_TIMEOUT),
            );
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(StartError::Exited {
                    name: self.name.clone(),
                    status: status.to_string(),
                    tail: self.log_tail(),
                });
            }
            if client
                .request("GET", "/blank", None)
                .is_ok_and(|r| r.status == 200)
            {
                return Ok(started.elapsed());
            }
            if started.elapsed() > deadline {
                return Err(StartError::NotReady {
                    name: self.name.clone(),
                    waited: deadline,
                    tail: self.log_tail(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Where the server's CPU time is read: its cgroup, or its process
    /// group's /proc ticks.
    pub fn cpu_source(&self) -> CpuSource {
        match &self.cpu_group {
            Some(g) => CpuSource::Cgroup(g.path().join("cpu.stat")),
            None => CpuSource::Ticks(self.pid()),
        }
    }

    /// The process id, which is also the id of the server's process group.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The addresses of every address of the machine (0.0.0.0, ::) that the
    /// server's processes listen on, in its network namespace: the contract
    /// says HOST.
    pub fn wildcard_listeners(&self) -> Vec<SocketAddr> {
        let members: Vec<i32> = self.tree.members().into_iter().map(|(p, _)| p).collect();
        let inodes = crate::listen::socket_inodes(members);
        let net = PathBuf::from(format!("/proc/{}/net", self.child.id()));
        let mut found: Vec<SocketAddr> = crate::listen::listeners(&net)
            .into_iter()
            .filter(|l| inodes.contains(&l.inode) && l.addr.ip().is_unspecified())
            .map(|l| l.addr)
            .collect();
        found.sort();
        found.dedup();
        found
    }

    /// Stops what is left of this process's tree and starts the same
    /// command again, on a fresh port of the same address (the old one may
    /// still be held by its connections), ready within `ready_within`: the
    /// hostile kind's server after an attack crashed it.
    pub fn restart(&mut self, ready_within: Duration) -> Result<(), StartError> {
        self.stop(Duration::from_secs(2));
        let (dir, m, mut spec) = self.started_as.clone();
        let port = free_port().map_err(|source| StartError::Spawn {
            name: m.name.clone(),
            source,
        })?;
        spec.addr = SocketAddr::new(spec.addr.ip(), port);
        let mut fresh = start(&dir, &m, &spec)?;
        fresh.wait_ready(ready_within)?;
        // The old one, already stopped, goes with its log.
        drop(std::mem::replace(self, fresh));
        Ok(())
    }

    /// How the server ended, if it already has.
    pub fn exited(&mut self) -> Option<String> {
        self.child.try_wait().ok().flatten().map(|s| s.to_string())
    }

    /// SIGTERM to the whole tree (the group, and processes that left it),
    /// then SIGKILL to whatever of it is left after `grace`. Idempotent.
    pub fn stop(&mut self, grace: Duration) {
        let leader = self.child.id();
        if let Ok(Some(_)) = self.child.try_wait() {
            // The leader is gone; what it left behind still goes.
            self.tree.kill_all(leader);
        } else {
            self.tree.signal(libc::SIGTERM);
            let until = Instant::now() + grace;
            while Instant::now() < until {
                // Done when the leader is reaped and nothing else is left of
                // the tree (a shell leader may die before the server it
                // started).
                if matches!(self.child.try_wait(), Ok(Some(_))) && self.tree.members().is_empty() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            self.tree.kill_all(leader);
            let _ = self.child.wait();
        }
        stop_guard(&mut self.guard);
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(2));
        crate::logs::remove(&self.log);
    }
}

#[cfg(test)]
mod tests {
    use super::{below_ephemeral, free_port, shell_line};

    #[test]
    fn free_ports_come_from_below_the_ephemeral_range() {
        assert_eq!(below_ephemeral("32768\t60999\n"), Some((10_000, 32_767)));
        assert_eq!(below_ephemeral("1024 65535"), None);
        assert_eq!(below_ephemeral("10999 60999"), None);
        assert_eq!(below_ephemeral("11000 60999"), Some((10_000, 10_999)));
        assert_eq!(below_ephemeral(""), None);
        assert_eq!(below_ephemeral("x y"), None);
        let a = free_port().unwrap();
        let b = free_port().unwrap();
        assert_ne!(a, b, "never the same port twice in a row");
        let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
        if let Some((low, high)) = below_ephemeral(&range) {
            for p in [a, b] {
                assert!((low..=high).contains(&p), "{p} outside {low}..={high}");
            }
        }
        // Free: the server can take it.
        std::net::TcpListener::bind(("127.0.0.1", a)).unwrap();
    }

    #[test]
    fn the_run_line_is_exec_ed_once_with_its_arguments_apart() {
        assert_eq!(shell_line("./bin/server"), "exec ./bin/server \"$@\"");
        // A leading assignment needs the shell to apply it; exec would not.
        assert_eq!(shell_line("GOGC=off ./srv"), "GOGC=off ./srv \"$@\"");
        // Written with exec already: `exec exec` would look for a program
        // called exec.
        assert_eq!(shell_line("exec ./bin/server"), "exec ./bin/server \"$@\"");
        assert_eq!(shell_line("executor --x"), "exec executor --x \"$@\"");
    }
}
