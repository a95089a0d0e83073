//! How each planned cell of a run meets its server process and is stored:
//! the matrix in interleaved rounds (`cells`), the order of a round, and
//! the process a cell runs on: a fresh one, the one serving its server's
//! round (`process = "round"`), or the resident one (`process = "run"`,
//! `resident.rs`). What it measured is stored at once, with any event of a
//! resident server.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cell::{
    failed, measure_in, run_cell, wait_for_quiet, CellEnv, CellOutcome, Measured, RequestsFor,
    Session,
};
use crate::resident::Resident;
use crate::runner::{requests_for, Event, Observer, RunError, RunRequest};
use crate::store::{CellKey, MeasurementStatus, Store};
use crate::suite::{Endpoint, Scenario, Suite};
use crate::targets::Target;
use crate::warm::ProcessScope;

/// One cell of the matrix, in the order it runs.
pub(crate) struct PlannedCell<'a> {
    pub(crate) key: CellKey,
    target: &'a Target,
    scenario: &'a Scenario,
}

/// Every cell of the matrix in interleaved rounds: round 1 of every server,
/// then round 2, so drift on a shared machine does not favour one server.
pub(crate) fn cells<'a>(
    suite: &'a Suite,
    rounds: impl IntoIterator<Item = u32> + 'a,
    targets: &'a [&'a Target],
) -> impl Iterator<Item = PlannedCell<'a>> + 'a {
    rounds.into_iter().flat_map(move |repetition| {
        suite.scenarios.iter().flat_map(move |scenario| {
            scenario
                .cell_counts()
                .into_iter()
                .flat_map(move |connections| {
                    targets
                        .iter()
                        .filter(|t| planned_for(scenario, t))
                        .map(move |&target| PlannedCell {
                            key: CellKey {
                                server: target.manifest.name.clone(),
                                variant: target.variant.clone(),
                                scenario: scenario.name.clone(),
                                connections,
                                repetition,
                            },
                            target,
                            scenario,
                        })
                })
        })
    })
}

/// A running server process and the round of the server it serves.
pub(crate) struct OpenSession {
    server: String,
    variant: String,
    repetition: u32,
    session: Session,
}

/// The server processes a run's cells run on, as its suite's `[warmup]
/// process` says.
pub(crate) enum Processes {
    /// A fresh process for every cell (`"cell"`).
    Fresh,
    /// The process serving the current server's round (`"round"`), dropped
    /// (so stopped) when the round moves on.
    Round(Option<Box<OpenSession>>),
    /// Every server resident for the whole run (`"run"`).
    Run(Resident),
}

impl Processes {
    /// What the suite asks for (resident servers start at their first
    /// visit).
    pub(crate) fn open(suite: &Suite) -> Processes {
        match suite.warm.process {
            ProcessScope::Cell => Processes::Fresh,
            ProcessScope::Round => Processes::Round(None),
            ProcessScope::Run => Processes::Run(Resident::default()),
        }
    }

    /// Puts `cells` (whole rounds, in round order) in the order they run.
    /// Resident servers: each round shuffled by the run's seed, the first
    /// round this process runs grouped by server to warm each
    /// (`rounds::order`). Processes per round: each server's cells of a
    /// round together. Fresh processes: as planned.
    pub(crate) fn order(&self, cells: &mut Vec<PlannedCell<'_>>, seed: u64, first_round: u32) {
        match self {
            Processes::Fresh => {}
            Processes::Round(_) => order_for_reuse(cells),
            Processes::Run(_) => {
                cells.sort_by_key(|c| c.key.repetition);
                let mut out = Vec::with_capacity(cells.len());
                let mut rest: Vec<PlannedCell<'_>> = std::mem::take(cells);
                while !rest.is_empty() {
                    let round = rest[0].key.repetition;
                    let cut = rest.partition_point(|c| c.key.repetition == round);
                    let mut this: Vec<PlannedCell<'_>> = rest.drain(..cut).collect();
                    crate::rounds::order(
                        &mut this,
                        seed,
                        round,
                        round == first_round,
                        |c| (c.key.server.clone(), c.key.variant.clone()),
                        |c| c.scenario.kind.warms(),
                    );
                    out.extend(this);
                }
                *cells = out;
            }
        }
    }

    /// Stops what is still running.
    pub(crate) fn close(&mut self) {
        match self {
            Processes::Fresh => {}
            Processes::Round(open) => *open = None,
            Processes::Run(resident) => resident.stop_all(),
        }
    }
}

/// Whether a cell of `scenario` is planned for `t` (its part offered, and
/// selected by the scenario).
fn planned_for(scenario: &Scenario, t: &Target) -> bool {
    scenario.needs().is_none_or(|p| t.manifest.offers(p))
        && scenario.selects(
            &t.manifest.name,
            &t.variant,
            t.manifest.allocator == Some(crate::allocator::Allocator::Glibc),
        )
}

/// Whether a cell may run on a process that served other cells of its
/// server's round: the kind warms (a warm process is what it should
/// measure), and the cell runs on loopback (a namespace is made fresh for
/// each cell).
fn reuses(scenario: &Scenario) -> bool {
    scenario.kind.warms() && scenario.placement == crate::netns::NetPlacement::Loopback
}

/// Whether a resident server serves a cell: on loopback, of a kind that
/// loads a running server (throughput and its variants, and the fixed
/// rates and sweeps, which then meet it warm). Idle levels and storms
/// measure a fresh process's memory and accept queue, and hostile cells
/// may crash their server: those start their own.
fn resident_serves(scenario: &Scenario) -> bool {
    use crate::kinds::Kind;
    scenario.placement == crate::netns::NetPlacement::Loopback
        && matches!(
            scenario.kind,
            Kind::Throughput
                | Kind::ShortLived { .. }
                | Kind::Pipelined { .. }
                | Kind::FixedRate { .. }
                | Kind::RateSweep { .. }
        )
}

/// With processes per round, each round's cells that reuse run server by
/// server (every scenario and connection count of one server together, in
/// the suite's order), so one process serves them; the round's other cells
/// follow as planned. Rounds stay interleaved across servers.
fn order_for_reuse(cells: &mut Vec<PlannedCell<'_>>) {
    let mut servers: Vec<(String, String)> = Vec::new();
    let mut keyed: Vec<((u32, bool, usize, usize), PlannedCell<'_>)> = cells
        .drain(..)
        .enumerate()
        .map(|(i, c)| {
            let who = (c.key.server.clone(), c.key.variant.clone());
            let at = servers.iter().position(|w| *w == who).unwrap_or_else(|| {
                servers.push(who);
                servers.len() - 1
            });
            let later = !reuses(c.scenario);
            let server_order = if later { 0 } else { at };
            ((c.key.repetition, later, server_order, i), c)
        })
        .collect();
    keyed.sort_by_key(|(k, _)| *k);
    cells.extend(keyed.into_iter().map(|(_, c)| c));
}

/// Runs `cells` in order, numbering them on from `index`; false when a
/// cancel stopped one.
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure_all(
    req: &RunRequest,
    env: &CellEnv<'_>,
    store: &mut Store,
    obs: &mut dyn Observer,
    ids: (i64, u64),
    cells: Vec<PlannedCell<'_>>,
    (index, total): (&mut usize, usize),
    processes: &mut Processes,
) -> Result<bool, RunError> {
    for cell in cells {
        *index += 1;
        if !measure(req, env, store, obs, ids, &cell, (*index, total), processes)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Runs one cell, stores it and tells the observer; false when a cancel
/// stopped it (nothing stored).
#[allow(clippy::too_many_arguments)]
fn measure(
    req: &RunRequest,
    env: &CellEnv<'_>,
    store: &mut Store,
    obs: &mut dyn Observer,
    (run, work_seed): (i64, u64),
    cell: &PlannedCell<'_>,
    (index, total): (usize, usize),
    processes: &mut Processes,
) -> Result<bool, RunError> {
    if req.cancel.load(Ordering::Relaxed) {
        return Ok(false);
    }
    obs.event(Event::CellStarted {
        index,
        total,
        key: &cell.key,
    });
    let s = cell.scenario;
    // The table queries checks against is put back after the last updates
    // cell here, not at its end: the server that updated may go on writing
    // for requests its end cut off until it is stopped or quiet.
    if s.endpoint == Endpoint::Queries && env.world_changed.load(Ordering::Relaxed) {
        reseed_world(env.backend_env).map_err(RunError::Reseed)?;
        env.world_changed.store(false, Ordering::Relaxed);
    }
    let requests = requests_for(
        s.endpoint,
        s.protocol,
        s.sends_keepalive(),
        s.work_documents,
        work_seed,
    );
    let k = cell.key.clone();
    let warm = &req.suite.warm;
    let outcome = match processes {
        Processes::Round(open) if reuses(s) => on_round_process(env, open, cell, &requests, warm),
        Processes::Run(resident) if resident_serves(s) => {
            let visit = resident.visit(env, cell.target, s, k, &requests, warm);
            for e in &visit.events {
                store.record_event(run, e)?;
                obs.event(Event::Server(e));
            }
            visit.outcome
        }
        _ => run_cell(env, cell.target, s, k, &requests, warm),
    };
    match outcome {
        CellOutcome::Interrupted => return Ok(false),
        CellOutcome::Done(done) => {
            let Measured { record, result } = *done;
            store.record_measurement(run, &record)?;
            obs.event(Event::CellFinished {
                index,
                total,
                key: &cell.key,
                result: result.as_ref(),
                facts: record.facts.as_ref(),
                failure: record.failure.as_deref(),
                seconds: record.duration_s,
            });
            debug_assert!(record.status == MeasurementStatus::Ok || record.failure.is_some());
        }
    }
    if s.endpoint == Endpoint::Updates {
        env.world_changed.store(true, Ordering::Relaxed);
    }
    sleep_unless_cancelled(req.suite.cooldown, &req.cancel);
    Ok(true)
}

/// A cell on the process of its server's round: the open one when it is
/// that round's and alive, else a new one.
fn on_round_process(
    env: &CellEnv<'_>,
    open: &mut Option<Box<OpenSession>>,
    cell: &PlannedCell<'_>,
    requests: &RequestsFor<'_>,
    warm: &crate::warm::Warm,
) -> CellOutcome {
    let (k, s) = (&cell.key, cell.scenario);
    let same_round = |o: &OpenSession| {
        o.server == k.server && o.variant == k.variant && o.repetition == k.repetition
    };
    if !open
        .as_mut()
        .is_some_and(|o| same_round(o) && !o.session.exited())
    {
        // The process of another round (or a crashed one) goes first.
        *open = None;
        let quiet = wait_for_quiet(env, None);
        let (started, at) = (Instant::now(), std::time::SystemTime::now());
        let session = match Session::start(env, cell.target, s) {
            Ok(session) => session,
            Err(e) => return failed(k.clone(), e, started, at),
        };
        let o = open.insert(Box::new(OpenSession {
            server: k.server.clone(),
            variant: k.variant.clone(),
            repetition: k.repetition,
            session,
        }));
        return measure_in(env, &mut o.session, s, k.clone(), requests, warm, quiet);
    }
    let o = open.as_mut().expect("kept");
    let quiet = wait_for_quiet(env, Some(o.session.pid()));
    measure_in(env, &mut o.session, s, k.clone(), requests, warm, quiet)
}

/// Puts the World rows updates cells changed back to their seeded values,
/// so that every queries cell checks against the same table. It waits (10 s
/// at most) until no other session of the database has been busy for half a
/// second: a server still running may be finishing updates of requests an
/// updates cell's end cut off, between which its sessions are briefly idle
/// (found by queries cells failing nearly every answer after a
/// thread-per-connection server's updates). A deadlock with one that starts
/// meanwhile aborts one side, and the reseed tries again.
fn reseed_world(backend_env: &[(String, String)]) -> Result<(), String> {
    const ATTEMPTS: u32 = 5;
    let url = backend_env
        .iter()
        .find(|(k, _)| k == "DATABASE_URL")
        .map(|(_, v)| v.as_str())
        .ok_or("the run has no database")?;
    let mut pg = postgres::Client::connect(url, postgres::NoTls).map_err(|e| pg_error(&e))?;
    // The server may still be finishing updates of requests the cell's end
    // cut off; a row it writes after the reseed would stay changed.
    let busy = "SELECT count(*) FROM pg_stat_activity \
                WHERE datname = current_database() AND pid <> pg_backend_pid() \
                AND state <> 'idle'";
    let until = std::time::Instant::now() + Duration::from_secs(10);
    let mut quiet_since = None;
    while std::time::Instant::now() < until {
        let n: i64 = pg.query_one(busy, &[]).map_err(|e| pg_error(&e))?.get(0);
        let now = std::time::Instant::now();
        if n > 0 {
            quiet_since = None;
        } else if now.duration_since(*quiet_since.get_or_insert(now)) >= Duration::from_millis(500)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut attempt = 1;
    loop {
        match pg.batch_execute(netbench_contract::world::RESEED_SQL) {
            Ok(()) => return Ok(()),
            Err(e) if attempt < ATTEMPTS => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(200 * u64::from(attempt)));
                attempt += 1;
            }
            Err(e) => return Err(format!("{} after {ATTEMPTS} attempts", pg_error(&e))),
        }
    }
}

/// A PostgreSQL error with the server's own message (its Display alone says
/// "db error").
fn pg_error(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

fn sleep_unless_cancelled(d: Duration, cancel: &AtomicBool) {
    let until = std::time::Instant::now() + d;
    while std::time::Instant::now() < until && !cancel.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
}
