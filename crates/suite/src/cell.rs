//! One measurement of a run: a fresh server process, ready, loaded by the
//! engine while /proc is sampled, then stopped; everything that happened
//! becomes a measurement record, failures included.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use netbench_engine::{LoadPlan, LoadResult, Pacing, RequestTemplate, RunControl, Stop, Url};

use crate::noise::{self, Noise};
use crate::sampler::Sampler;
use crate::server::{free_port, start, StartSpec};
use crate::store::{rfc3339, CellKey, Measurement, MeasurementStatus, Sample};
use crate::suite::{Length, Scenario};
use crate::targets::Target;

/// How long a fresh server may take to answer its first request, unless
/// the caller says otherwise.
pub const READY_WITHIN: Duration = Duration::from_secs(60);
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

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
        },
        result: None,
    }))
}

fn plan_for(
    addr: SocketAddr,
    scenario: &Scenario,
    connections: u32,
    requests: Vec<RequestTemplate>,
    workers: usize,
) -> LoadPlan {
    LoadPlan {
        addr,
        connections: connections as usize,
        workers: workers.clamp(1, connections as usize),
        stop: match scenario.length {
            Length::Duration(d) => Stop::After(d),
            Length::Requests(n) => Stop::Count(n),
        },
        pacing: Pacing::Closed,
        warmup: scenario.warmup,
        timeout: REQUEST_TIMEOUT,
        keepalive: scenario.keepalive,
        pipeline: 1,
        requests,
    }
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
    let (busy_before, quiet_wait) = noise::wait_for_quiet(env.quiet_wait, env.cancel);
    let started = Instant::now();
    let at = SystemTime::now();
    let port = match free_port() {
        Ok(p) => p,
        Err(e) => return failed(key, format!("no free port: {e}"), started, at),
    };
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let spec = StartSpec {
        addr,
        args: target.args.clone(),
        env: target.env.clone(),
        cpus: env.server_cpus.map(<[usize]>::to_vec),
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
    let plan = plan_for(
        addr,
        scenario,
        key.connections,
        requests(&url),
        env.client_workers,
    );
    let control = RunControl::new(&plan);
    // The machine-speed control: the same fixed work on the server's and
    // the client's CPUs (this thread is pinned to the client's) before and
    // after the cell.
    let probes_before = (noise::probe(env.server_cpus), noise::probe(None));
    let load = noise::LoadWindow::start(Some(server.pid()));
    let sampler = Sampler::start(server.pid(), SAMPLE_EVERY);
    let done = AtomicBool::new(false);
    let mut timed_out = false;
    let result = std::thread::scope(|scope| {
        // The engine stops on the run's cancel or on the suite's per-cell
        // time limit, whichever comes first.
        let watchdog = scope.spawn(|| {
            let began = Instant::now();
            while !done.load(Ordering::Relaxed) {
                if env.cancel.load(Ordering::Relaxed) {
                    control.cancel.store(true, Ordering::Relaxed);
                } else if began.elapsed() > env.cell_timeout {
                    control.cancel.store(true, Ordering::Relaxed);
                    return true;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            false
        });
        let result = netbench_engine::run(&plan, &control);
        done.store(true, Ordering::Relaxed);
        timed_out = watchdog.join().unwrap_or(false);
        result
    });
    let samples = sampler.stop();
    let load = load.and_then(noise::LoadWindow::finish);
    let probes_after = (noise::probe(env.server_cpus), noise::probe(None));
    let crashed = server.exited();
    let tail = server.log_tail();
    server.stop(Duration::from_secs(5));

    let result = match result {
        Ok(r) => r,
        Err(e) => return failed(key, format!("the load could not run: {e}"), started, at),
    };
    if env.cancel.load(Ordering::Relaxed) {
        return CellOutcome::Interrupted;
    }
    if let Some(status) = crashed {
        let why = format!(
            "the server exited during the measurement ({status}); its last output:\n{}",
            tail.trim_end()
        );
        return failed(key, why, started, at);
    }
    if timed_out {
        let why = format!(
            "still running after the suite's cell_timeout of {:?}; {} answers by then",
            env.cell_timeout, result.requests
        );
        return failed(key, why, started, at);
    }
    let warmup_s = scenario.warmup.as_secs_f64();
    let rows = samples
        .iter()
        .filter(|s| s.t_s + 1e-3 >= warmup_s)
        .map(|s| Sample {
            t_s: s.t_s - warmup_s,
            ..*s
        })
        .collect();
    let histogram = result.latency_histogram.as_ref().and_then(|h| {
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
        result_json: serde_json::to_string(&result).ok(),
        histogram,
        client_bound: result.verdict.client_bound,
        started_at: rfc3339(at),
        duration_s: result.duration_s,
        samples: rows,
        noise: measured_noise(probes_before, probes_after, load, busy_before, quiet_wait),
    };
    CellOutcome::Done(Box::new(Measured {
        record,
        result: Some(result),
    }))
}

/// The cell's noise facts, when the probes and /proc/stat could be read.
fn measured_noise(
    before: (Option<f64>, Option<f64>),
    after: (Option<f64>, Option<f64>),
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
        probe_drift: sa / sb - 1.0,
        steal: load.steal,
        other_busy_cores: load.other_busy_cores,
        other_busy_before_cores: busy_before,
        quiet_wait_s: quiet_wait.as_secs_f64(),
    })
}
