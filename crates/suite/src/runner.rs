//! `netbench run`: the whole matrix of a suite, hands-off. Builds every
//! server it can, verifies each once, then runs every cell in interleaved
//! rounds with the server and the client on disjoint CPUs, storing each
//! result as soon as it exists. Faults are recorded and the run goes on; a
//! cancel stops it cleanly, and `resume` finishes it later.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netbench_contract::{
    blank_request, echo_request, static_request, upload_requests, verify, work_gzip_requests,
    work_requests, Client, VerifyOptions, WorkGenerator, DEFAULT_DATES, STATIC_FILES,
};
use netbench_engine::{LoadResult, RequestTemplate, Url};

use crate::adaptive::{next_round, whole_rows, SettleRule, Stopped};
use crate::cell::CellEnv;
use crate::kinds::Traffic;
use crate::listeners::{ask_for_listeners, wait_accepting, Listeners};
use crate::manifest::{Offer, ServerManifest};
use crate::pki::RunPki;
use crate::placement::{allowed_cpus, pin_current_thread_scoped, resolve, Cpus};
use crate::postgres::{pool_size, PrivatePostgres};
use crate::server::{free_port, start, StartSpec};
use crate::store::{BuildStatus, CellKey, NewRun, RunStatus, ServerRecord, Store, StoreError};
use crate::suite::{Endpoint, Repetitions, Suite};
use crate::targets::{build_cached, missing_packages, missing_tools, select, Target};
use crate::visits::{cells, measure_all, PlannedCell, Processes};
use netbench_records::Protocol;

/// Everything a run needs from its caller.
pub struct RunRequest {
    pub suite: Suite,
    pub servers_dir: PathBuf,
    /// Where tool versions and the commit are read, and build caches kept.
    pub project_dir: PathBuf,
    pub build_cache: PathBuf,
    /// The command line, for the record.
    pub command: String,
    /// Finish this stored run instead of starting a new one.
    pub resume: Option<i64>,
    /// Repetitions in place of the suite's (`--repetitions`; a resumed run
    /// passes what it stored).
    pub repetitions: Option<Repetitions>,
    /// Decides when a cell's repetitions have settled, for adaptive
    /// repetitions (the reports' statistics; see [`SettleRule`]).
    pub settle: SettleRule,
    /// Set by Ctrl-C or SIGTERM.
    pub cancel: Arc<AtomicBool>,
    /// How long a fresh server may take to answer its first request.
    pub ready_within: Duration,
    /// The program whose `attack` subcommand the hostile kind starts as
    /// its attackers: netbench itself (`current_exe`); None fails hostile
    /// cells with that reason.
    pub attacker: Option<PathBuf>,
}

/// What happens, for a progress display. The runner never prints.
#[derive(Debug)]
pub enum Event<'a> {
    Started {
        run: i64,
        servers: usize,
        cells: usize,
        done_before: usize,
        /// How long the cells still to run should take to measure (builds
        /// and verification not included); None when the suite cannot say.
        estimate: Option<Duration>,
    },
    Building {
        server: &'a str,
    },
    Built {
        server: &'a str,
        seconds: f64,
        cached: bool,
    },
    Excluded {
        server: &'a str,
        reason: &'a str,
    },
    Verified {
        server: &'a str,
        passed: usize,
        warned: usize,
        ready_s: f64,
    },
    CellStarted {
        index: usize,
        total: usize,
        key: &'a CellKey,
    },
    CellFinished {
        index: usize,
        total: usize,
        key: &'a CellKey,
        result: Option<&'a LoadResult>,
        /// What a kind beyond throughput measured.
        facts: Option<&'a crate::kinds::Facts>,
        failure: Option<&'a str>,
        seconds: f64,
    },
    /// Something happened to a resident server: started, waited (its CPU
    /// and memory meanwhile), crashed, restarted.
    Server(&'a netbench_records::ServerEvent),
    /// Adaptive repetitions: another round, of the cells still unsettled.
    AdaptiveRound {
        round: u32,
        cells: usize,
    },
    /// Adaptive repetitions ended: every cell settled, or the budget or the
    /// maximum count was reached with `unsettled` cells left.
    AdaptiveStopped {
        stopped: Stopped,
        unsettled: usize,
    },
    Finished {
        run: i64,
        status: RunStatus,
    },
}

pub trait Observer {
    fn event(&mut self, e: Event<'_>);
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
    #[error("{0}")]
    Placement(String),
    #[error("no server matches the suite's selectors {0:?}; see servers/ for the names")]
    NoServers(Vec<String>),
    #[error("the suite has db scenarios, and its PostgreSQL could not start: {0}")]
    Postgres(#[from] crate::postgres::PgError),
    #[error(transparent)]
    Netns(#[from] crate::netns::NetnsError),
    #[error(
        "cannot put the World table back after an updates cell ({0}): the cells after it \
         would be measured against changed rows, so the run stops here; resume it with --resume"
    )]
    Reseed(String),
    #[error("{0}")]
    Pki(String),
}

/// How the run ended.
#[derive(Debug, Clone, Copy)]
pub struct RunOutcome {
    pub run: i64,
    pub status: RunStatus,
}

/// Distinct rows a db cell asks for, and lists a db-list cell asks for:
/// enough that no server can keep a handful of answers, few enough that the
/// expected answers stay small beside the client's buffers.
const DB_IDS: usize = 1000;
const DB_LISTS: usize = 200;

pub(crate) fn requests_for(
    endpoint: Endpoint,
    protocol: Protocol,
    keepalive: bool,
    work_docs: usize,
    seed: u64,
) -> impl Fn(&Url) -> Traffic {
    move |url: &Url| match endpoint {
        // gRPC's call is work's computation, on the same documents.
        Endpoint::Work if protocol == Protocol::Grpc => netbench_contract::grpc::grpc_requests(
            url,
            &WorkGenerator::new(seed, DEFAULT_DATES).cases(work_docs),
        )
        .into(),
        Endpoint::App => {
            let (requests, session) =
                netbench_contract::app::app_load(url, seed, netbench_contract::app::LOAD_PAGES);
            Traffic {
                requests,
                session: Some(session),
            }
        }
        _ => requests_of(endpoint, keepalive, work_docs, seed, url).into(),
    }
}

/// The requests of an endpoint without sessions.
fn requests_of(
    endpoint: Endpoint,
    keepalive: bool,
    work_docs: usize,
    seed: u64,
    url: &Url,
) -> Vec<RequestTemplate> {
    use netbench_contract::db;
    match endpoint {
        Endpoint::Blank => vec![blank_request(url, keepalive)],
        Endpoint::Echo => vec![echo_request(url, keepalive)],
        Endpoint::Work => work_requests(
            url,
            keepalive,
            WorkGenerator::new(seed, DEFAULT_DATES).cases(work_docs),
        ),
        Endpoint::WorkBrowser => netbench_contract::work_browser_requests(
            url,
            keepalive,
            WorkGenerator::new(seed, DEFAULT_DATES).cases(work_docs),
        ),
        Endpoint::Db => db::db_requests(url, keepalive, &db::random_ids(seed, DB_IDS, db::ROWS)),
        Endpoint::DbList => {
            let last_full = db::ROWS - db::DEFAULT_COUNT as i32 + 1;
            let froms = db::random_ids(seed, DB_LISTS, last_full);
            db::db_list_requests(url, keepalive, &froms, db::DEFAULT_COUNT)
        }
        // The messages are made by the engine's WebSocket client.
        Endpoint::Ws => Vec::new(),
        Endpoint::Static => vec![static_request(url, keepalive, STATIC_FILES[0])],
        Endpoint::Static1m => vec![static_request(url, keepalive, STATIC_FILES[1])],
        Endpoint::Upload => upload_requests(url, keepalive, seed),
        Endpoint::JsonComp => work_gzip_requests(
            url,
            keepalive,
            WorkGenerator::new(seed, DEFAULT_DATES).cases(work_docs),
        ),
        Endpoint::Fortunes => vec![netbench_contract::fortunes::fortunes_request(
            url, keepalive,
        )],
        Endpoint::JsonCompBr => netbench_contract::work_br_requests(
            url,
            keepalive,
            WorkGenerator::new(seed, DEFAULT_DATES).cases(work_docs),
        ),
        Endpoint::Queries => vec![netbench_contract::world::queries_request(url, keepalive)],
        Endpoint::Updates => vec![netbench_contract::world::updates_request(url, keepalive)],
        Endpoint::App => unreachable!("requests_for makes the app's traffic"),
    }
}

/// The back ends a run started for its scenarios (a PostgreSQL for db
/// scenarios), and what servers are told about them.
struct Backends {
    postgres: Option<PrivatePostgres>,
    /// The run's private authority and server certificate, when a server
    /// of the run offers a listener of contract 1.5.
    pki: Option<RunPki>,
    /// Added to every server's environment (`DATABASE_URL`, `TLS_CERT`,
    /// ...).
    env: Vec<(String, String)>,
}

impl Backends {
    fn start(suite: &Suite, cpus: &Cpus, targets: &[Target]) -> Result<Backends, RunError> {
        let listens = [Offer::Tls, Offer::H2c, Offer::Grpc];
        let pki = if targets
            .iter()
            .any(|t| listens.iter().any(|&o| t.manifest.offers(o)))
        {
            Some(RunPki::make(&std::env::temp_dir()).map_err(|e| RunError::Pki(e.to_string()))?)
        } else {
            None
        };
        let mut env: Vec<(String, String)> =
            pki.as_ref().map(RunPki::server_env).unwrap_or_default();
        let needs_db = suite.scenarios.iter().any(|s| s.endpoint.uses_database());
        if !needs_db {
            return Ok(Backends {
                postgres: None,
                pki,
                env,
            });
        }
        let pg = PrivatePostgres::start(cpus.server.as_deref())?;
        env.push(("DATABASE_URL".to_string(), pg.url()));
        env.push((
            "DATABASE_POOL_SIZE".to_string(),
            pool_size(cpus.server.as_deref()).to_string(),
        ));
        Ok(Backends {
            postgres: Some(pg),
            pki,
            env,
        })
    }

    /// What the run's record says about them (in its environment, beside
    /// the tool versions).
    fn describe(&self) -> Option<serde_json::Value> {
        let pg = self.postgres.as_ref()?;
        Some(serde_json::json!({
            "version": pg.facts.version,
            "cpus": pg.facts.cpus,
            "where": "private, loopback only, pinned to the server's CPUs, which it shares with the server",
        }))
    }
}

/// A server left out of the run: its record and why.
struct Excluded {
    record: ServerRecord,
    reason: String,
}

fn excluded(record: ServerRecord, reason: impl Into<String>) -> Box<Excluded> {
    Box::new(Excluded {
        record,
        reason: reason.into(),
    })
}

/// Builds and verifies one target; `Err` holds why it is left out.
fn prepare(
    req: &RunRequest,
    t: &Target,
    cpus: &Cpus,
    machine_cpus: &[usize],
    backends: &Backends,
    obs: &mut dyn Observer,
) -> Result<ServerRecord, Box<Excluded>> {
    let label = t.label();
    let manifest_toml = std::fs::read_to_string(t.dir.join("server.toml")).unwrap_or_default();
    let mut record = ServerRecord {
        server: t.manifest.name.clone(),
        variant: t.variant.clone(),
        facts: crate::records_of::server_facts(&manifest_toml, &t.variant),
        manifest_toml,
        build_status: BuildStatus::Skipped,
        build_s: 0.0,
        artefact_bytes: None,
        ready_s: None,
        verify_json: None,
        excluded_reason: None,
        allocator: t.allocator.map(|a| a.as_str().to_string()),
    };
    let packages = missing_packages(&t.manifest);
    if !packages.is_empty() {
        let list = packages.join(" ");
        return Err(excluded(
            record,
            format!("Debian packages not installed: {list} (apt-get install {list})"),
        ));
    }
    let missing = missing_tools(&t.manifest);
    if !missing.is_empty() {
        let packages = if t.manifest.packages.is_empty() {
            String::new()
        } else {
            format!(
                " (Debian packages it needs: {})",
                t.manifest.packages.join(" ")
            )
        };
        return Err(excluded(
            record,
            format!("toolchain not installed: {}{packages}", missing.join(", ")),
        ));
    }
    if let Some(a) = t.allocator {
        if let Err(e) = crate::allocator::library_path(a) {
            return Err(excluded(record, e.to_string()));
        }
    }
    obs.event(Event::Building { server: &label });
    let built = {
        // This thread is pinned to the client's CPUs, and a build inherits
        // that: on two CPUs every build ran on one, taking nearly twice as
        // long. A build has the run's every CPU (the machine is otherwise
        // idle); the guard pins the thread back.
        let _every_cpu = pin_current_thread_scoped(machine_cpus).ok();
        build_cached(&t.dir, &t.manifest, &req.build_cache, &req.cancel)
    };
    match built {
        Ok(b) => {
            obs.event(Event::Built {
                server: &label,
                seconds: b.seconds,
                cached: b.cached,
            });
            record.build_status = BuildStatus::Ok;
            record.build_s = b.seconds;
            record.artefact_bytes = b.artefact_bytes;
        }
        Err(e) => {
            record.build_status = BuildStatus::Failed;
            return Err(excluded(record, e.to_string()));
        }
    }
    let addr: SocketAddr = match free_port() {
        Ok(p) => ([127, 0, 0, 1], p).into(),
        Err(e) => return Err(excluded(record, format!("no free port: {e}"))),
    };
    let listeners = match Listeners::for_manifest(&t.manifest) {
        Ok(l) => l,
        Err(e) => return Err(excluded(record, format!("no free port: {e}"))),
    };
    let spec = StartSpec {
        addr,
        args: t.args.clone(),
        env: t
            .env
            .iter()
            .chain(&backends.env)
            .cloned()
            .chain(listeners.env())
            .collect(),
        cpus: cpus.server.clone(),
        // Verified once, on loopback, whatever the scenarios' placement.
        netns: None,
    };
    let mut server = match start(&t.dir, &t.manifest, &spec) {
        Ok(s) => s,
        Err(e) => return Err(excluded(record, e.to_string())),
    };
    let ready = match server.wait_ready(req.ready_within) {
        Ok(d) => d,
        Err(e) => return Err(excluded(record, e.to_string())),
    };
    if let Err(e) = wait_accepting(addr.ip(), &listeners.ports(), req.ready_within, || {
        server.exited().is_some()
    }) {
        server.stop(Duration::from_secs(5));
        return Err(excluded(record, e));
    }
    record.ready_s = Some(ready.as_secs_f64());
    if let Some(a) = t.allocator {
        let checked = crate::allocator::group_allocators(server.pid())
            .map_err(|e| crate::allocator::AllocatorError::Unreadable(e.to_string()))
            .and_then(|found| crate::allocator::check(a, &found));
        if let Err(e) = checked {
            server.stop(Duration::from_secs(5));
            return Err(excluded(record, e.to_string()));
        }
    }
    let client = Client::new(addr, Duration::from_secs(5));
    let mut options = VerifyOptions::new(client, seed_now());
    let reads_database = [Offer::Db, Offer::Fortunes, Offer::Queries, Offer::Updates];
    if reads_database.into_iter().any(|o| t.manifest.offers(o)) {
        options.database_url = backends.postgres.as_ref().map(PrivatePostgres::url);
    }
    ask_for_offers(&mut options, &t.manifest);
    // The HTTP/1.1 conformance probes where the suite asks: a score kept in
    // servers.verify, not a reason to leave a server out.
    options.conformance = req.suite.conformance;
    ask_for_listeners(
        &mut options,
        &t.manifest,
        &listeners,
        addr.ip(),
        backends.pki.as_ref().map(|p| p.ca.as_path()),
    );
    let report = verify(&options);
    let wildcard = server.wildcard_listeners();
    server.stop(Duration::from_secs(5));
    record.verify_json = serde_json::to_string(&report).ok();
    if let Some(any) = wildcard.first() {
        return Err(excluded(
            record,
            format!(
                "listens on {any}, every address of the machine, where the contract says \
                 HOST ({}): bind to the address in HOST",
                addr.ip()
            ),
        ));
    }
    use netbench_contract::CheckStatus::{Fail, Pass, Warn};
    if !report.ok() {
        let reasons: Vec<String> = report
            .checks
            .iter()
            .filter(|c| c.status == Fail)
            .map(|c| format!("{}: {}", c.name, c.reason))
            .collect();
        return Err(excluded(
            record,
            format!("fails verify: {}", reasons.join("; ")),
        ));
    }
    obs.event(Event::Verified {
        server: &label,
        passed: report.count(Pass),
        warned: report.count(Warn),
        ready_s: ready.as_secs_f64(),
    });
    Ok(record)
}

fn seed_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Asks `verify` for the checks of every optional part `manifest` offers,
/// as the runner and the reference servers' test both do.
pub fn ask_for_offers(options: &mut VerifyOptions, manifest: &ServerManifest) {
    options.ws = manifest.offers(Offer::Ws);
    options.static_files = manifest.offers(Offer::Static);
    options.upload = manifest.offers(Offer::Upload);
    options.json_comp = manifest.offers(Offer::JsonComp);
    options.fortunes = manifest.offers(Offer::Fortunes);
    options.queries = manifest.offers(Offer::Queries);
    options.updates = manifest.offers(Offer::Updates);
    options.app = manifest.offers(Offer::App);
}
/// Runs (or resumes) a suite to the end, or until cancelled.
pub fn run_suite(
    req: &RunRequest,
    store: &mut Store,
    obs: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let suite = &req.suite;
    // Before anything is built or recorded: a run that cannot place its
    // servers in namespaces says why at once.
    if suite.needs_netns() {
        crate::netns::check_usable()?;
    }
    let targets = select(&req.servers_dir, &suite.servers)?;
    if targets.is_empty() {
        return Err(RunError::NoServers(suite.servers.clone()));
    }
    // Before the client pins itself, so the run records the machine's CPUs
    // rather than the client's share of them.
    let environment = req
        .resume
        .is_none()
        .then(|| crate::environment::capture(&req.project_dir));
    let machine_cpus = allowed_cpus();
    let cpus = resolve(&suite.placement, &machine_cpus).map_err(RunError::Placement)?;
    let _pinned = cpus
        .client
        .as_deref()
        .map(|client| {
            pin_current_thread_scoped(client).map_err(|e| {
                RunError::Placement(format!("cannot pin the client to {client:?}: {e}"))
            })
        })
        .transpose()?;
    let client_workers = cpus
        .client
        .as_ref()
        .map_or_else(netbench_engine::default_workers, Vec::len);

    let suite = &match req.repetitions {
        Some(r) => suite.clone().with(r)?,
        None => suite.clone(),
    };
    let repetitions = suite.repetitions;
    // Before anything is recorded: a run whose database cannot start has
    // nothing to measure its db cells against.
    let backends = Backends::start(suite, &cpus, &targets)?;
    let environment = environment.map(|mut env| {
        if let (Some(pg), Some(map)) = (backends.describe(), env.as_object_mut()) {
            map.insert("postgresql".to_string(), pg);
        }
        env
    });
    let (run, done): (i64, HashSet<CellKey>) = match req.resume {
        Some(id) => {
            let done = store.completed_cells(id)?;
            store.set_run_status(id, RunStatus::Running)?;
            (id, done)
        }
        None => {
            let run = store.begin_run(&NewRun {
                suite: suite.name.clone(),
                suite_toml: suite.source.clone(),
                command: req.command.clone(),
                environment: environment.unwrap_or_default(),
                placement: serde_json::to_value(&cpus).unwrap_or_default(),
                repetitions: match req.repetitions {
                    Some(Repetitions::Count(n)) => Some(n),
                    _ => None,
                },
                work_seed: seed_now(),
                adaptive: suite.adaptive,
                scenarios: crate::records_of::scenario_records(suite),
            })?;
            (run, HashSet::new())
        }
    };
    // A run stored before seeds were kept resumes with a fixed one.
    let work_seed = store.run(run)?.work_seed.unwrap_or(1);
    // Cells of an optional part a server does not offer are not planned.
    let all: Vec<&Target> = targets.iter().collect();
    // Counted, never collected: one round's cells times the rounds.
    let total = cells(suite, 1..=1, &all).count() * repetitions as usize;
    obs.event(Event::Started {
        run,
        servers: targets.len(),
        cells: total,
        done_before: done.len(),
        estimate: suite.estimate(total.saturating_sub(done.len())),
    });

    let cancelled = || req.cancel.load(Ordering::Relaxed);
    let finish = |store: &mut Store,
                  status: RunStatus,
                  obs: &mut dyn Observer|
     -> Result<RunOutcome, RunError> {
        store.set_run_status(run, status)?;
        obs.event(Event::Finished { run, status });
        Ok(RunOutcome { run, status })
    };

    // Build and verify every server once; those that fail are left out with
    // their reason, and the run goes on with the rest.
    let mut ready = Vec::new();
    for t in &targets {
        if cancelled() {
            return finish(store, RunStatus::Interrupted, obs);
        }
        let prepared = prepare(req, t, &cpus, &machine_cpus, &backends, obs);
        // A cancel during a build or verify leaves that server unjudged:
        // nothing is recorded, and --resume prepares it again.
        if cancelled() {
            return finish(store, RunStatus::Interrupted, obs);
        }
        match prepared {
            Ok(record) => {
                store.record_server(run, &record)?;
                ready.push(t);
            }
            Err(left_out) => {
                let Excluded { mut record, reason } = *left_out;
                obs.event(Event::Excluded {
                    server: &t.label(),
                    reason: &reason,
                });
                record.excluded_reason = Some(reason);
                store.record_server(run, &record)?;
            }
        }
    }

    let backend_pgids: Vec<i32> = backends.postgres.iter().map(PrivatePostgres::pid).collect();
    let env = CellEnv {
        server_cpus: cpus.server.as_deref(),
        client_workers,
        cell_timeout: suite.cell_timeout,
        ready_within: req.ready_within,
        quiet_wait: suite.quiet_wait,
        cancel: &req.cancel,
        backend_env: &backends.env,
        backend_pgids: &backend_pgids,
        io: suite.io,
        // A run resumed after an updates cell finds the table as it left it.
        pki_ca: backends.pki.as_ref().map(|p| p.ca.as_path()),
        world_changed: AtomicBool::new(
            suite
                .scenarios
                .iter()
                .any(|s| s.endpoint == Endpoint::Updates),
        ),
        attacker: req.attacker.as_deref(),
    };
    let began = Instant::now();
    let mut index = done.len();
    let mut total = total;
    let mut processes = Processes::open(suite);
    let resident = matches!(processes, Processes::Run(_));
    let ids = (run, work_seed);
    // The first round this process runs warms its resident servers.
    let first_round = (1..=repetitions)
        .find(|&r| cells(suite, r..=r, &ready).any(|c| !done.contains(&c.key)))
        .unwrap_or(1);
    // Planned a round at a time (rounds run one after another anyway), so
    // what is held is one round's cells whatever the repetitions. What one
    // cell of a round after the warm one takes, as measured, is what the
    // budget of adaptive rounds is spent at.
    let mut per_cell: Option<Duration> = None;
    for round in 1..=repetitions {
        let mut planned: Vec<PlannedCell> = cells(suite, round..=round, &ready)
            .filter(|c| !done.contains(&c.key))
            .collect();
        if resident && round > first_round {
            // A server that could not keep up with a fixed rate in the warm
            // round is shown so there; its later rounds would measure it at
            // a rate of its own, which ranks nothing.
            let not_held = store.fixed_rate_not_held(run)?;
            let before = planned.len();
            planned.retain(|c| !not_held.contains(&c.key.cell()));
            total -= before - planned.len();
        }
        processes.order(&mut planned, work_seed, first_round);
        let (n, round_began) = (planned.len(), Instant::now());
        if !measure_all(
            req,
            &env,
            store,
            obs,
            ids,
            planned,
            (&mut index, total),
            &mut processes,
        )? {
            processes.close();
            return finish(store, RunStatus::Interrupted, obs);
        }
        if round > first_round && n > 0 {
            per_cell = Some(round_began.elapsed() / n as u32);
        }
    }
    if let Some(a) = suite.adaptive {
        // Rounds past the first ones, each of the cells still too noisy to
        // rank, interleaved like the first; a resumed run goes on from its
        // last stored round.
        let mut round = done
            .iter()
            .map(|k| k.repetition)
            .max()
            .unwrap_or(0)
            .max(repetitions)
            + 1;
        loop {
            let values = store.cell_figures(run)?;
            let spent = began.elapsed();
            let cost = |n: usize| match per_cell {
                Some(c) => c * n as u32,
                None => suite.estimate(n).unwrap_or_default(),
            };
            let open = match next_round(&a, req.settle, round, &values, spent, cost) {
                // With resident servers a row goes on whole while any of its
                // cells is unsettled: its figures are paired within rounds.
                Ok(open) if resident => whole_rows(open, values.keys()),
                Ok(open) => open,
                Err(stopped) => {
                    let unsettled = values
                        .values()
                        .filter(|v| !(req.settle)(v, a.target))
                        .count();
                    obs.event(Event::AdaptiveStopped { stopped, unsettled });
                    break;
                }
            };
            let not_held = if resident {
                store.fixed_rate_not_held(run)?
            } else {
                HashSet::new()
            };
            let mut planned: Vec<PlannedCell> = cells(suite, round..=round, &ready)
                .filter(|c| open.binary_search(&c.key.cell()).is_ok() && !done.contains(&c.key))
                .filter(|c| !not_held.contains(&c.key.cell()))
                .collect();
            processes.order(&mut planned, work_seed, first_round);
            obs.event(Event::AdaptiveRound {
                round,
                cells: planned.len(),
            });
            total += planned.len();
            let n = planned.len();
            let counts = (&mut index, total);
            let round_began = Instant::now();
            if !measure_all(req, &env, store, obs, ids, planned, counts, &mut processes)? {
                processes.close();
                return finish(store, RunStatus::Interrupted, obs);
            }
            if n > 0 {
                per_cell = Some(round_began.elapsed() / n as u32);
            }
            round += 1;
        }
    }
    processes.close();
    finish(store, RunStatus::Complete, obs)
}
