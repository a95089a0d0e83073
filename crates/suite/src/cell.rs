//! One measurement of a run: a fresh server process, ready, loaded by the
//! engine while /proc is sampled, then stopped; everything that happened
//! becomes a measurement record, failures included.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use netbench_engine::{LoadResult, Url};

use crate::kinds::hostile_run::{measure_hostile, HostileIn, ServerSlot};
use crate::kinds::{self, Carrier, Kind, Measure, Outcome, Traffic};
use crate::listeners::{wait_accepting, Listeners};
use crate::loopback_probe;
use crate::netns::{Namespace, NetPlacement, NetworkPath};
use crate::noise::{self, Noise};
use crate::sampler::Sampler;
use crate::server::RunningServer;
use crate::server::{free_port, start, StartSpec};
use crate::store::{rfc3339, CellKey, Measurement, MeasurementStatus, Sample, WarmUp};
use crate::suite::Scenario;
use crate::targets::Target;
use crate::warm::{Warm, WarmIn};

/// How long a fresh server may take to answer its first request, unless
/// the caller says otherwise.
pub const READY_WITHIN: Duration = Duration::from_secs(60);
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// What the caller fixed for the whole run.
pub struct CellEnv<'a> {
    pub server_cpus: Option<&'a [usize]>,
    pub client_workers: usize,
    pub cell_timeout: Duration,
    pub ready_within: Duration,
    /// The longest to wait for a quiet machine before the cell.
    pub quiet_wait: Duration,
    /// The run's cancel flag (Ctrl-C, SIGTERM).
    pub cancel: &'a Arc<AtomicBool>,
    /// Added to the server's environment: where the run's back ends are
    /// (`DATABASE_URL`, `DATABASE_POOL_SIZE`).
    pub backend_env: &'a [(String, String)],
    /// The back ends' process groups: their CPU is part of the cell, not
    /// noise from other processes.
    pub backend_pgids: &'a [i32],
    /// The client's I/O backend, from the suite (`io`).
    pub io: netbench_engine::IoBackend,
    /// The run's authority, which the client trusts over TLS (None when no
    /// server of the run offers a TLS listener).
    pub pki_ca: Option<&'a std::path::Path>,
    /// An updates cell changed the World table since it was last put back
    /// to its seeded values: the next queries cell puts it back first.
    pub world_changed: std::sync::atomic::AtomicBool,
    /// The program whose `attack` subcommand a hostile cell starts
    /// (netbench itself); None fails hostile cells.
    pub attacker: Option<&'a std::path::Path>,
}

/// How a cell ended.
pub enum CellOutcome {
    Done(Box<Measured>),
    /// Cancelled by the user: nothing recorded, a resume runs it again.
    Interrupted,
}

/// A finished cell: the record to store, and the engine's result when there
/// is one.
pub struct Measured {
    pub record: Measurement,
    pub result: Option<LoadResult>,
}

/// A cell that failed before or while it measured, with its reason.
pub(crate) fn failed(key: CellKey, why: String, started: Instant, at: SystemTime) -> CellOutcome {
    CellOutcome::Done(Box::new(Measured {
        record: Measurement {
            id: None,
            key,
            status: MeasurementStatus::Failed,
            failure: Some(why),
            result_json: None,
            histogram: None,
            client_bound: false,
            started_at: rfc3339(at),
            duration_s: started.elapsed().as_secs_f64(),
            samples: Vec::new(),
            noise: None,
            facts: None,
            server_cpu_s: None,
            network: None,
            warmup: None,
            server_output_cut: None,
        },
        result: None,
    }))
}

/// What a scenario sends, for a server at `addr`.
pub type RequestsFor<'a> = dyn Fn(&Url) -> Traffic + 'a;

/// A server process started for one cell, or for every cell of its
/// server's round (a suite's `[warmup] process = "round"`).
pub struct Session {
    // Declared before the namespace, so the server stops before the
    // namespace is deleted.
    server: RunningServer,
    namespace: Option<Namespace>,
    addr: SocketAddr,
    /// Its listeners of contract 1.5 beside `addr`'s.
    listeners: Listeners,
    network: NetworkPath,
    /// When the process was started: the x origin of its warm-up curves.
    spawned: Instant,
    /// From the start to the first answer.
    ready: Duration,
    /// Cells measured on it so far.
    served: usize,
    /// Its runtime compiles while it runs (the manifest's `jit`).
    jit: bool,
    /// The manifest's `warm_min` for a fresh process.
    warm_min: Option<Duration>,
}

impl Session {
    /// Starts `target` for cells placed as `scenario` is, and waits until
    /// it answers.
    pub fn start(
        env: &CellEnv<'_>,
        target: &Target,
        scenario: &Scenario,
    ) -> Result<Session, String> {
        // A namespace of the cell's own: every cell starts from the same
        // clean link, queue and counters.
        let namespace = match scenario.placement {
            NetPlacement::Loopback => None,
            NetPlacement::Netns => {
                Some(Namespace::create(scenario.bandwidth).map_err(|e| e.to_string())?)
            }
        };
        Session::start_in(env, target, namespace)
    }

    /// Starts `target` on loopback, for whichever cells come (a resident
    /// server).
    pub fn start_on_loopback(env: &CellEnv<'_>, target: &Target) -> Result<Session, String> {
        Session::start_in(env, target, None)
    }

    fn start_in(
        env: &CellEnv<'_>,
        target: &Target,
        namespace: Option<Namespace>,
    ) -> Result<Session, String> {
        let network = namespace
            .as_ref()
            .map_or_else(crate::netns::loopback_path, |ns| ns.path.clone());
        // Any free port will do inside a fresh namespace too.
        let port = free_port().map_err(|e| format!("no free port: {e}"))?;
        let addr = SocketAddr::new(network.server_addr, port);
        let listeners =
            Listeners::for_manifest(&target.manifest).map_err(|e| format!("no free port: {e}"))?;
        let spec = StartSpec {
            addr,
            args: target.args.clone(),
            env: target
                .env
                .iter()
                .chain(env.backend_env)
                .cloned()
                .chain(listeners.env())
                .collect(),
            cpus: env.server_cpus.map(<[usize]>::to_vec),
            netns: namespace.as_ref().map(Namespace::file),
        };
        let spawned = Instant::now();
        let mut server = start(&target.dir, &target.manifest, &spec).map_err(|e| e.to_string())?;
        let ready = server
            .wait_ready(env.ready_within)
            .map_err(|e| e.to_string())?;
        wait_accepting(addr.ip(), &listeners.ports(), env.ready_within, || {
            server.exited().is_some()
        })?;
        Ok(Session {
            server,
            namespace,
            addr,
            listeners,
            network,
            spawned,
            ready,
            served: 0,
            jit: target.manifest.jit,
            warm_min: target.manifest.warm_min,
        })
    }

    /// Whether the process has exited (it crashed, or was never usable).
    pub fn exited(&mut self) -> bool {
        self.server.exited().is_some()
    }

    /// How the process ended, if it has.
    pub fn exit_status(&mut self) -> Option<String> {
        self.server.exited()
    }

    /// The end of what it wrote.
    pub fn log_tail(&self) -> String {
        self.server.log_tail()
    }

    /// From its start to its first answer.
    pub fn ready(&self) -> Duration {
        self.ready
    }

    /// Its process tree's CPU seconds so far.
    pub fn cpu_s(&self) -> Option<f64> {
        self.server.cpu_source().cpu_s()
    }

    /// The server's process group, to leave out of the quiet wait of a
    /// cell that reuses it.
    pub fn pid(&self) -> i32 {
        self.server.pid()
    }

    pub fn stop(mut self) {
        self.server.stop(Duration::from_secs(5));
    }
}

/// Runs one cell on a server process of its own. Never panics on a
/// misbehaving server: every problem is a failed record with its reason.
pub fn run_cell(
    env: &CellEnv<'_>,
    target: &Target,
    scenario: &Scenario,
    key: CellKey,
    requests: &RequestsFor<'_>,
    warm: &Warm,
) -> CellOutcome {
    // Another process keeping the CPUs busy would be measured along with
    // the server: wait, a bounded time, for it to stop, and say so.
    let quiet = noise::wait_for_quiet(env.quiet_wait, env.backend_pgids, env.cancel);
    let (started, at) = (Instant::now(), SystemTime::now());
    let mut session = match Session::start(env, target, scenario) {
        Ok(s) => s,
        Err(e) => return failed(key, e, started, at),
    };
    let outcome = measure_in(env, &mut session, scenario, key, requests, warm, quiet);
    session.stop();
    outcome
}

/// Waits, a bounded time, for processes other than the run's (its back
/// ends, and `server` when a cell reuses a running one) to leave the CPUs
/// alone: how busy they were, and how long it waited.
pub fn wait_for_quiet(env: &CellEnv<'_>, server: Option<i32>) -> (f64, Duration) {
    let ours: Vec<i32> = env.backend_pgids.iter().copied().chain(server).collect();
    noise::wait_for_quiet(env.quiet_wait, &ours, env.cancel)
}

/// Measures one cell on a running server: the warm phase when the suite
/// warms until steady, then the scenario's kind, with the controls around
/// it. The server is left running, or dead if it crashed (the record says
/// so). `quiet` is what the wait before the cell saw.
pub fn measure_in(
    env: &CellEnv<'_>,
    session: &mut Session,
    scenario: &Scenario,
    key: CellKey,
    requests: &RequestsFor<'_>,
    warm: &Warm,
    quiet: (f64, Duration),
) -> CellOutcome {
    let (busy_before, quiet_wait) = quiet;
    let started = Instant::now();
    let at = SystemTime::now();
    let fresh = session.served == 0;
    session.served += 1;
    let (ready, spawned, jit) = (session.ready, session.spawned, session.jit);
    let warm_min = session.warm_min;
    let network = session.network.clone();
    // The listener the scenario's protocol reaches (cells are planned only
    // for servers that offer it, so it is there).
    let addr = match session
        .listeners
        .port_for(scenario.protocol, session.addr.port())
    {
        Some(port) => SocketAddr::new(session.addr.ip(), port),
        None => {
            return failed(
                key,
                format!(
                    "the server has no listener for {}",
                    scenario.protocol.as_str()
                ),
                started,
                at,
            )
        }
    };
    let carrier = match Carrier::of(scenario, env.pki_ca) {
        Ok(c) => c,
        Err(e) => return failed(key, e, started, at),
    };
    let namespace = session.namespace.as_ref();
    let server = &mut session.server;
    if env.cancel.load(Ordering::Relaxed) {
        return CellOutcome::Interrupted;
    }
    // What its log dropped before this cell (a process kept for the round
    // served others), so the record counts this cell's alone.
    let cut_before = server.output_cut();
    let url = url_at(addr, carrier.tls.is_some());
    // The machine-speed controls: the same fixed work on the server's and
    // the client's CPUs (this thread is pinned to the client's), and the
    // same exchange over loopback between them, before and after the cell.
    let probes_before = probes(env.server_cpus);
    let measured: Vec<i32> = std::iter::once(server.pid())
        .chain(env.backend_pgids.iter().copied())
        .collect();
    let load = noise::LoadWindow::start(&measured);
    let sampler = Sampler::start(server.pid(), SAMPLE_EVERY);
    // Set by the run's cancel or the suite's per-cell time limit, whichever
    // comes first; every engine run of the cell watches it.
    let cell_cancel = Arc::new(AtomicBool::new(false));
    let measure = Measure {
        addr,
        pgid: server.pid(),
        cpu: server.cpu_source(),
        cancel: &cell_cancel,
        workers: env.client_workers,
        traffic: requests(&url),
        epoch: sampler.started(),
        netns: namespace.map(|ns| ns.name.as_str()),
        io: env.io,
        carrier,
    };
    let done = AtomicBool::new(false);
    let mut timed_out = false;
    let outcome = std::thread::scope(|scope| {
        let watchdog = scope.spawn(|| {
            let began = Instant::now();
            while !done.load(Ordering::Relaxed) {
                if env.cancel.load(Ordering::Relaxed) {
                    cell_cancel.store(true, Ordering::Relaxed);
                } else if began.elapsed() > env.cell_timeout {
                    cell_cancel.store(true, Ordering::Relaxed);
                    return true;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            false
        });
        let outcome = match &scenario.kind {
            Kind::Hostile(plan) => {
                let tls = url.tls;
                let traffic = |a: SocketAddr| requests(&url_at(a, tls));
                let h = HostileIn {
                    plan,
                    base: kinds::base_plan(scenario, key.connections, &measure),
                    attacker: env.attacker,
                    jit,
                    traffic: &traffic,
                };
                let mut slot = CellServer {
                    server: &mut *server,
                    ready_within: env.ready_within,
                };
                measure_hostile(&h, &measure, &mut slot).map(|m| (Outcome::Done(Box::new(m)), None))
            }
            _ => warm_then_measure(
                scenario,
                key.connections,
                &measure,
                warm,
                WarmStart {
                    fresh: fresh.then_some(ready),
                    since_start: spawned.elapsed(),
                    first_round: key.repetition == 1,
                    jit,
                    warm_min,
                },
            ),
        };
        done.store(true, Ordering::Relaxed);
        timed_out = watchdog.join().unwrap_or(false);
        outcome
    });
    let samples = sampler.stop();
    let load = load.and_then(noise::LoadWindow::finish);
    let probes_after = probes(env.server_cpus);
    let crashed = server.exited();
    let tail = server.log_tail();
    // A hostile cell's restart starts a new log: never below zero.
    let output_cut = Some(server.output_cut().saturating_sub(cut_before)).filter(|&n| n > 0);

    if env.cancel.load(Ordering::Relaxed) {
        return CellOutcome::Interrupted;
    }
    let (outcome, warmup) = match outcome {
        Ok((o, w)) => (Ok(o), w),
        Err(e) => (Err(e), None),
    };
    let measured = match outcome {
        Ok(Outcome::Done(m)) => *m,
        Ok(Outcome::Idle {
            mut measured,
            result,
            hold,
            heartbeat,
        }) => {
            measured.facts = Some(kinds::idle_facts(&result, &samples, hold, heartbeat));
            *measured
        }
        Err(e) if !timed_out => return failed(key, e, started, at),
        Err(_) => {
            let why = format!(
                "still running after the suite's cell_timeout of {:?}",
                env.cell_timeout
            );
            return failed(key, why, started, at);
        }
    };
    // A hostile cell's crashes are its findings, in its facts.
    let crashed = crashed.filter(|_| !matches!(scenario.kind, Kind::Hostile(_)));
    if let Some(status) = crashed {
        let why = format!(
            "the server exited during the measurement ({status}); its last output:\n{}",
            tail.trim_end()
        );
        return failed(key, why, started, at);
    }
    if timed_out {
        let answers = measured.result.as_ref().map_or(0, |r| r.requests);
        let why = format!(
            "still running after the suite's cell_timeout of {:?}; {answers} answers by then",
            env.cell_timeout
        );
        return failed(key, why, started, at);
    }
    let from_s = measured.keep_samples_from_s;
    let rows = samples
        .iter()
        .filter(|s| s.t_s + 1e-3 >= from_s)
        .map(|s| Sample {
            t_s: s.t_s - from_s,
            ..*s
        })
        .collect();
    let histogram = measured.histogram.as_ref().and_then(|h| {
        let mut out = Vec::new();
        hdrhistogram::serialization::Serializer::serialize(
            &mut hdrhistogram::serialization::V2Serializer::new(),
            h,
            &mut out,
        )
        .ok()
        .map(|_| out)
    });
    let record = Measurement {
        id: None,
        key,
        status: MeasurementStatus::Ok,
        failure: None,
        result_json: Some(measured.result_json),
        histogram,
        client_bound: measured.client_bound,
        started_at: rfc3339(at),
        duration_s: measured.duration_s,
        samples: rows,
        noise: measured_noise(probes_before, probes_after, load, busy_before, quiet_wait),
        facts: measured.facts,
        server_cpu_s: measured.server_cpu_s,
        network: Some(network),
        warmup,
        server_output_cut: output_cut,
    };
    CellOutcome::Done(Box::new(Measured {
        record,
        result: measured.result,
    }))
}

/// The URL of a server at `addr`, which its requests are made for.
fn url_at(addr: SocketAddr, tls: bool) -> Url {
    Url {
        tls,
        host: netbench_engine::Host::Ip(addr.ip()),
        port: addr.port(),
        path: "/".to_string(),
    }
}

/// A hostile cell's hold on its server: a crash restarts it.
struct CellServer<'s> {
    server: &'s mut RunningServer,
    ready_within: Duration,
}

impl ServerSlot for CellServer<'_> {
    fn addr(&self) -> SocketAddr {
        self.server.addr
    }
    fn pgid(&self) -> i32 {
        self.server.pid()
    }
    fn cpu_source(&self) -> crate::server::CpuSource {
        self.server.cpu_source()
    }
    fn exited(&mut self) -> Option<String> {
        self.server.exited()
    }
    fn restart(&mut self) -> Result<(), String> {
        self.server
            .restart(self.ready_within)
            .map_err(|e| format!("the server could not be started again after an attack: {e}"))
    }
}

/// Where a cell's warm phase starts from.
struct WarmStart {
    /// The start-up time of a process that serves its first cell; None for
    /// a process that served cells before.
    fresh: Option<Duration>,
    /// From the process's start to now.
    since_start: Duration,
    /// The cell is of the first round, whose fresh processes warm at least
    /// the suite's `startup` for the start-up figures.
    first_round: bool,
    /// The server's runtime compiles while it runs (the manifest's `jit`).
    jit: bool,
    /// The manifest's `warm_min`: a fresh process warms at least this long.
    warm_min: Option<Duration>,
}

/// The kind's measurement, warmed until steady on its own connections when
/// the suite says so and the kind is one that warms.
fn warm_then_measure(
    scenario: &Scenario,
    connections: u32,
    m: &Measure<'_>,
    warm: &Warm,
    start: WarmStart,
) -> Result<(Outcome, Option<WarmUp>), String> {
    let Some(cfg) = &warm.until_steady else {
        return kinds::measure_cell_warm(scenario, connections, m, None);
    };
    let at_least = match start.fresh {
        Some(_) => {
            let startup = if start.first_round {
                warm.startup
            } else {
                Duration::ZERO
            };
            startup.max(start.warm_min.unwrap_or_default())
        }
        None => Duration::ZERO,
    };
    let w = WarmIn {
        cfg,
        rule: match &warm.jit_fresh {
            Some(jit) if start.fresh.is_some() && start.jit => *jit,
            _ => *cfg,
        },
        at_least,
        fresh_ready: start.fresh,
        since_start: start.since_start,
    };
    kinds::measure_cell_warm(scenario, connections, m, Some(&w))
}

/// The controls around a cell: the CPU probe on the server's CPUs and on
/// this thread's, and the loopback exchange between them.
type Probes = (Option<f64>, Option<f64>, Option<f64>);

fn probes(server_cpus: Option<&[usize]>) -> Probes {
    (
        noise::probe(server_cpus),
        noise::probe(None),
        loopback_probe::probe(server_cpus),
    )
}

/// The cell's noise facts, when the CPU probes and /proc/stat could be
/// read (the loopback probe is kept when both of its readings were made).
fn measured_noise(
    before: Probes,
    after: Probes,
    load: Option<noise::Load>,
    busy_before: f64,
    quiet_wait: Duration,
) -> Option<Noise> {
    let (sb, cb) = (before.0?, before.1?);
    let (sa, ca) = (after.0?, after.1?);
    let load = load?;
    Some(Noise {
        probe_server_ns: (sb + sa) / 2.0,
        probe_client_ns: (cb + ca) / 2.0,
        probe_loopback_ns: before.2.zip(after.2).map(|(b, a)| (b + a) / 2.0),
        probe_drift: sa / sb - 1.0,
        steal: load.steal,
        other_busy_cores: load.other_busy_cores,
        other_busy_before_cores: busy_before,
        quiet_wait_s: quiet_wait.as_secs_f64(),
    })
}
