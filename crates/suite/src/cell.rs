//! One measurement of a run: a fresh server process, ready, loaded by the
//! engine while /proc is sampled, then stopped; everything that happened
//! becomes a measurement record, failures included.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use netbench_engine::{LoadResult, RequestTemplate, Url};

use crate::kinds::{self, Measure, Outcome};
use crate::loopback_probe;
use crate::netns::{Namespace, NetPlacement, NetworkPath};
use crate::noise::{self, Noise};
use crate::sampler::Sampler;
use crate::server::{free_port, start, StartSpec};
use crate::store::{rfc3339, CellKey, Measurement, MeasurementStatus, Sample};
use crate::suite::Scenario;
use crate::targets::Target;

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

fn failed(key: CellKey, why: String, started: Instant, at: SystemTime) -> CellOutcome {
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
        },
        result: None,
    }))
}

/// The requests of a scenario, for a server at `addr`.
pub type RequestsFor<'a> = dyn Fn(&Url) -> Vec<RequestTemplate> + 'a;

/// Runs one cell. Never panics on a misbehaving server: every problem is a
/// failed record with its reason.
pub fn run_cell(
    env: &CellEnv<'_>,
    target: &Target,
    scenario: &Scenario,
    key: CellKey,
    requests: &RequestsFor<'_>,
) -> CellOutcome {
    // Another process keeping the CPUs busy would be measured along with
    // the server: wait, a bounded time, for it to stop, and say so.
    let (busy_before, quiet_wait) =
        noise::wait_for_quiet(env.quiet_wait, env.backend_pgids, env.cancel);
    let started = Instant::now();
    let at = SystemTime::now();
    // A namespace of the cell's own: every cell starts from the same clean
    // link, queue and counters. Declared before the server, so it is
    // deleted after the server has stopped.
    let namespace = match scenario.placement {
        NetPlacement::Loopback => None,
        NetPlacement::Netns => match Namespace::create(scenario.bandwidth) {
            Ok(ns) => Some(ns),
            Err(e) => return failed(key, e.to_string(), started, at),
        },
    };
    let network = namespace
        .as_ref()
        .map_or_else(NetworkPath::loopback, |ns| ns.path.clone());
    // Any free port will do inside a fresh namespace too.
    let port = match free_port() {
        Ok(p) => p,
        Err(e) => return failed(key, format!("no free port: {e}"), started, at),
    };
    let addr = SocketAddr::new(network.server_addr, port);
    let spec = StartSpec {
        addr,
        args: target.args.clone(),
        env: target.env.iter().chain(env.backend_env).cloned().collect(),
        cpus: env.server_cpus.map(<[usize]>::to_vec),
        netns: namespace.as_ref().map(Namespace::file),
    };
    let mut server = match start(&target.dir, &target.manifest, &spec) {
        Ok(s) => s,
        Err(e) => return failed(key, e.to_string(), started, at),
    };
    if let Err(e) = server.wait_ready(env.ready_within) {
        return failed(key, e.to_string(), started, at);
    }
    if env.cancel.load(Ordering::Relaxed) {
        return CellOutcome::Interrupted;
    }
    let url = Url {
        host: netbench_engine::Host::Ip(addr.ip()),
        port: addr.port(),
        path: "/".to_string(),
    };
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
        cancel: &cell_cancel,
        workers: env.client_workers,
        requests: requests(&url),
        epoch: sampler.started(),
        netns: namespace.as_ref().map(|ns| ns.name.as_str()),
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
        let outcome = kinds::measure_cell(scenario, key.connections, &measure);
        done.store(true, Ordering::Relaxed);
        timed_out = watchdog.join().unwrap_or(false);
        outcome
    });
    let samples = sampler.stop();
    let load = load.and_then(noise::LoadWindow::finish);
    let probes_after = probes(env.server_cpus);
    let crashed = server.exited();
    let tail = server.log_tail();
    server.stop(Duration::from_secs(5));

    if env.cancel.load(Ordering::Relaxed) {
        return CellOutcome::Interrupted;
    }
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
        warmup: None,
    };
    CellOutcome::Done(Box::new(Measured {
        record,
        result: measured.result,
    }))
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
