//! The results store: one SQLite file holding every run, the servers in it,
//! each measurement with its raw result, histogram and /proc samples, so any
//! report can be rebuilt from the file alone. Each record is committed on its
//! own as soon as it is known, so a crash or Ctrl-C loses nothing finished.

mod events;
mod liveness;
mod open;

mod schema;
mod timestamp;
mod typed;

pub use netbench_records::run::*;
pub use netbench_records::{ScenarioRecord, ServerFacts};

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rusqlite::{
    params, Connection, ErrorCode, OptionalExtension, Row, Transaction, TransactionBehavior,
};

pub use liveness::remove_held_files;
pub use schema::SCHEMA_VERSION;

use crate::netns::{Bandwidth, NetPlacement, NetworkPath};
pub use timestamp::rfc3339;

/// How long a write waits for another process (a concurrent `netbench run` or
/// a reader checkpointing the WAL) before giving up with "database is locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create {path}, the directory for the results store: {source}; create it yourself or choose another --db")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open the results store {path}: {source}; check that it is a netbench results database in a writable directory, or choose another --db")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("cannot bring the results store {path} to schema version {version}: {source}; that step was rolled back, so move the file aside or choose another --db")]
    Migrate {
        path: PathBuf,
        version: u32,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the results store {path} has schema version {found}, but this netbench knows versions up to {SCHEMA_VERSION}: it was made by a newer netbench; upgrade or use another --db")]
    NewerSchema { path: PathBuf, found: u32 },
    #[error("{path} is a SQLite database of another program (it holds {tables}), not a netbench results store; it was left as it was: choose another --db")]
    Foreign { path: PathBuf, tables: String },
    #[error("there is no results store at {path}: run a suite first (`netbench run quick`), or pass --db FILE")]
    Missing { path: PathBuf },
    /// SQLite's own check finds the file damaged: a run added to it would
    /// be stored among pages that no longer read back (issue 42: `run`
    /// appended to a store `runs` called malformed).
    #[error("the results store {path} is damaged (SQLite's check: {detail}); netbench adds nothing to a damaged store: restore it from a copy, or choose another --db (`sqlite3 FILE .recover` may save its runs)")]
    Damaged { path: PathBuf, detail: String },
    #[error("the results store {path} failed while {action}: {source}; if it is locked, another netbench is writing to it (wait, or choose another --db); if it is damaged, move it aside")]
    Query {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the results store {path} refused {action}: {source}; this is a bug in netbench, please report it with this message")]
    Rejected {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("there is no run {run} in the results store {path}; list the stored runs to find its id, or check --db")]
    NoSuchRun { path: PathBuf, run: i64 },
    #[error("run {run} in {path} has no record of server {server:?} variant {variant:?}; record the server before its measurements")]
    NoSuchServer {
        path: PathBuf,
        run: i64,
        server: String,
        variant: String,
    },
}

/// An open results store. Writers take `&self`, like readers, so a runner
/// can share it between its steps; it is not `Sync`, so one thread uses it at
/// a time.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The lock beside the file that says a run of this process is being
    /// measured (see [`liveness`]); held from a run's start or resume to
    /// its end.
    hold: std::cell::RefCell<Option<liveness::RunHold>>,
    /// What SQLite's check found wrong with the file when it was opened to
    /// read (a damaged store is refused for writing).
    damage: Option<String>,
}

impl Store {
    /// Opens (creating it and its directories if need be) the store at
    /// `path` and brings its schema up to [`SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let open_failed = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(open_failed)?;
        // Before anything is written (the journal mode, the schema): a file
        // of another program is left exactly as it was.
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_failed)?;
        refuse_foreign(&conn, path)?;
        // Once, before anything is added to it.
        if let Some(detail) = damage(&conn) {
            return Err(StoreError::Damaged {
                path: path.to_path_buf(),
                detail,
            });
        }
        Store::prepare(conn, path.to_path_buf())
    }

    /// What SQLite's check found wrong with the file when it was opened to
    /// read; None when nothing (or for a store opened to write, which is
    /// refused when damaged). Readers say so before what they show.
    pub fn damage(&self) -> Option<&str> {
        self.damage.as_deref()
    }

    /// Opens an existing store to read it: never creates the file or its
    /// folder, never migrates, never writes (`runs`, `show`, `report`,
    /// `compare`).
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        if !path.is_file() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        let open_failed = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let conn = open::open_reader(path, BUSY_TIMEOUT).map_err(open_failed)?;
        refuse_foreign(&conn, path)?;
        let found = schema::user_version(&conn).map_err(open_failed)?;
        let damaged = damage(&conn);
        let path = path.to_path_buf();
        let store = match found {
            v if v == SCHEMA_VERSION => Ok(Store::with(conn, path)),
            v if v > SCHEMA_VERSION => Err(StoreError::NewerSchema { path, found }),
            // An older file is read through an upgraded copy in memory: the
            // file itself stays as it was.
            _ => {
                let mut copy = Connection::open_in_memory().map_err(open_failed)?;
                rusqlite::backup::Backup::new(&conn, &mut copy)
                    .and_then(|b| b.run_to_completion(1024, Duration::ZERO, None))
                    .map_err(open_failed)?;
                drop(conn);
                Store::prepare(copy, path)
            }
        };
        store.map(|mut s| {
            s.damage = damaged;
            s
        })
    }

    /// A store that lives and dies with the value; for tests.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: path.clone(),
            source,
        })?;
        Store::prepare(conn, path)
    }

    fn prepare(mut conn: Connection, path: PathBuf) -> Result<Store, StoreError> {
        let open_failed = |source| StoreError::Open {
            path: path.clone(),
            source,
        };
        // The busy timeout first, so that switching the journal mode waits for
        // another process rather than failing. The journal mode is the first
        // statement that reads the file, so a file that is not a database
        // fails here, as an open error.
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_failed)?;
        // WAL: `netbench report` can read while a run writes, and a commit is
        // one append. An in-memory database answers "memory"; that is fine.
        let _mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "wal", |row| row.get(0))
            .map_err(open_failed)?;
        // FULL rather than WAL's usual NORMAL: each commit is synced, so a
        // power cut loses no finished measurement either. Commits are a few per
        // measurement, each lasting seconds, so the cost is nothing.
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open_failed)?;
        // Per connection and off by default; the schema's cascades and
        // references rely on it.
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open_failed)?;
        schema::migrate(&mut conn).map_err(|e| match e {
            schema::MigrateError::Newer { found } => StoreError::NewerSchema {
                path: path.clone(),
                found,
            },
            schema::MigrateError::Failed { version, source } => StoreError::Migrate {
                path: path.clone(),
                version,
                source,
            },
        })?;
        Ok(Store::with(conn, path))
    }

    fn with(conn: Connection, path: PathBuf) -> Store {
        Store {
            conn,
            path,
            hold: std::cell::RefCell::new(None),
            damage: None,
        }
    }

    /// Holds the run-lock file beside the store for `run` (taking it when
    /// not held yet): from now on readers see the run as live.
    fn hold_run(&self, run: Option<i64>) {
        if self.path == Path::new(":memory:") {
            return;
        }
        let mut hold = self.hold.borrow_mut();
        if hold.is_none() {
            *hold = liveness::RunHold::take(&self.path);
        }
        if let (Some(h), Some(run)) = (hold.as_mut(), run) {
            h.name(run);
        }
    }

    /// The status as readers should see it: a run marked running that no
    /// live process holds was interrupted (its netbench was killed).
    fn live_status(
        &self,
        held: &Option<(liveness::Held, Option<i64>)>,
        id: i64,
        status: RunStatus,
    ) -> RunStatus {
        let Some((held, newest_running)) = held else {
            return status;
        };
        let live = held.runs.contains(&id) || (held.starting && *newest_running == Some(id));
        if status == RunStatus::Running && !live {
            RunStatus::Interrupted
        } else {
            status
        }
    }

    /// Which runs live processes hold, and the newest run marked running;
    /// None for an in-memory store, whose runs are all this process's.
    fn held(&self) -> Result<Option<(liveness::Held, Option<i64>)>, StoreError> {
        if self.path == Path::new(":memory:") {
            return Ok(None);
        }
        let newest: Option<i64> = self
            .conn
            .query_row(
                "SELECT max(id) FROM runs WHERE status = 'running'",
                [],
                |row| row.get(0),
            )
            .map_err(fail(&self.path, "reading which runs are running"))?;
        Ok(Some((liveness::held(&self.path), newest)))
    }

    /// Where the store lives (":memory:" for an in-memory one).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records the start of a run, with status running; returns its id.
    /// Until the run's status is set to anything else (or the store is
    /// dropped, or this process dies), a lock beside the file tells readers
    /// that the run is live.
    pub fn begin_run(&self, run: &NewRun) -> Result<i64, StoreError> {
        self.hold_run(None);
        let failed = fail(&self.path, "recording the start of a run");
        let tx = self.write().map_err(&failed)?;
        let id = tx
            .query_row(
                "INSERT INTO runs (suite, suite_toml, command, started_at, status, environment,
                                   placement, repetitions, work_seed, adaptive_min, adaptive_max,
                                   adaptive_target, adaptive_budget_s)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                 RETURNING id",
                params![
                    run.suite,
                    run.suite_toml,
                    run.command,
                    rfc3339(SystemTime::now()),
                    RunStatus::Running,
                    run.environment.to_string(),
                    run.placement.to_string(),
                    run.repetitions,
                    // SQLite integers are signed; the seed's bits are kept.
                    run.work_seed as i64,
                    run.adaptive.map(|a| a.min),
                    run.adaptive.map(|a| a.max),
                    run.adaptive.map(|a| a.target),
                    run.adaptive.map(|a| a.budget.as_secs_f64()),
                ],
                |row| row.get(0),
            )
            .map_err(&failed)?;
        typed::insert_scenarios(&tx, id, &run.scenarios).map_err(&failed)?;
        tx.commit().map_err(&failed)?;
        self.hold_run(Some(id));
        Ok(id)
    }

    /// Sets a run's status; any status but running also sets its finished
    /// time to now, and running (a resumed run) clears it.
    pub fn set_run_status(&self, run: i64, status: RunStatus) -> Result<(), StoreError> {
        if status == RunStatus::Running {
            self.hold_run(Some(run));
        }
        let finished_at = (status != RunStatus::Running).then(|| rfc3339(SystemTime::now()));
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3",
                params![status, finished_at, run],
            )
            .map_err(fail(&self.path, "setting the status of a run"))?;
        if changed == 0 {
            return Err(self.no_such_run(run));
        }
        if status != RunStatus::Running {
            self.hold.borrow_mut().take();
        }
        Ok(())
    }

    /// Records a server variant of a run, replacing what an earlier attempt
    /// of the same run recorded for it.
    pub fn record_server(&self, run: i64, server: &ServerRecord) -> Result<(), StoreError> {
        let failed = fail(&self.path, "recording a server");
        let tx = self.write().map_err(&failed)?;
        if !run_exists(&tx, run).map_err(&failed)? {
            return Err(no_such_run(&self.path, run));
        }
        // An upsert, not INSERT OR REPLACE: a replace deletes the row first,
        // and the delete would cascade to the server's measurements.
        tx.execute(
            "INSERT INTO servers (run_id, server, variant, manifest_toml, build_status, build_s,
                                  artefact_bytes, ready_s, verify, excluded_reason, allocator)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT (run_id, server, variant) DO UPDATE SET
                 manifest_toml = excluded.manifest_toml,
                 build_status = excluded.build_status,
                 build_s = excluded.build_s,
                 artefact_bytes = excluded.artefact_bytes,
                 ready_s = excluded.ready_s,
                 verify = excluded.verify,
                 excluded_reason = excluded.excluded_reason,
                 allocator = excluded.allocator",
            params![
                run,
                server.server,
                server.variant,
                server.manifest_toml,
                server.build_status,
                server.build_s,
                server.artefact_bytes.map(to_i64),
                server.ready_s,
                server.verify_json,
                server.excluded_reason,
                server.allocator,
            ],
        )
        .map_err(&failed)?;
        typed::write_server_facts(&tx, run, &server.server, &server.variant, &server.facts)
            .map_err(&failed)?;
        tx.commit().map_err(&failed)
    }

    /// Records a measurement and its samples in one transaction, replacing an
    /// earlier measurement of the same cell (a failed cell retried on resume);
    /// returns its id, which stays the same across replacements. The server
    /// must have been recorded first.
    pub fn record_measurement(&self, run: i64, m: &Measurement) -> Result<i64, StoreError> {
        let failed = fail(&self.path, "recording a measurement");
        let tx = self.write().map_err(&failed)?;
        if !run_exists(&tx, run).map_err(&failed)? {
            return Err(no_such_run(&self.path, run));
        }
        let k = &m.key;
        let net = m.network.as_ref();
        let server_known = tx
            .query_row(
                "SELECT 1 FROM servers WHERE run_id = ?1 AND server = ?2 AND variant = ?3",
                params![run, k.server, k.variant],
                |_| Ok(()),
            )
            .optional()
            .map_err(&failed)?
            .is_some();
        if !server_known {
            return Err(StoreError::NoSuchServer {
                path: self.path.clone(),
                run,
                server: k.server.clone(),
                variant: k.variant.clone(),
            });
        }
        let id: i64 = tx
            .query_row(
                "INSERT INTO measurements (run_id, server, variant, scenario, connections, repetition,
                                           status, failure, result, histogram, client_bound,
                                           started_at, duration_s, probe_server_ns, probe_client_ns,
                                           probe_drift, steal, other_busy_cores,
                                           other_busy_before_cores, quiet_wait_s, facts,
                                           server_cpu_s, net_placement, net_server_addr,
                                           net_client_addr, net_mtu, net_bandwidth_bps,
                                           net_burst_bytes, probe_loopback_ns, warmup,
                                           server_output_cut)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                         ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31)
                 ON CONFLICT (run_id, server, variant, scenario, connections, repetition) DO UPDATE SET
                     status = excluded.status,
                     failure = excluded.failure,
                     result = excluded.result,
                     histogram = excluded.histogram,
                     client_bound = excluded.client_bound,
                     started_at = excluded.started_at,
                     duration_s = excluded.duration_s,
                     probe_server_ns = excluded.probe_server_ns,
                     probe_client_ns = excluded.probe_client_ns,
                     probe_drift = excluded.probe_drift,
                     steal = excluded.steal,
                     other_busy_cores = excluded.other_busy_cores,
                     other_busy_before_cores = excluded.other_busy_before_cores,
                     quiet_wait_s = excluded.quiet_wait_s,
                     facts = excluded.facts,
                     server_cpu_s = excluded.server_cpu_s,
                     net_placement = excluded.net_placement,
                     net_server_addr = excluded.net_server_addr,
                     net_client_addr = excluded.net_client_addr,
                     net_mtu = excluded.net_mtu,
                     net_bandwidth_bps = excluded.net_bandwidth_bps,
                     net_burst_bytes = excluded.net_burst_bytes,
                     probe_loopback_ns = excluded.probe_loopback_ns,
                     warmup = excluded.warmup,
                     server_output_cut = excluded.server_output_cut
                 RETURNING id",
                params![
                    run,
                    k.server,
                    k.variant,
                    k.scenario,
                    k.connections,
                    k.repetition,
                    m.status,
                    m.failure,
                    m.result_json,
                    m.histogram,
                    m.client_bound,
                    m.started_at,
                    m.duration_s,
                    m.noise.map(|n| n.probe_server_ns),
                    m.noise.map(|n| n.probe_client_ns),
                    m.noise.map(|n| n.probe_drift),
                    m.noise.map(|n| n.steal),
                    m.noise.map(|n| n.other_busy_cores),
                    m.noise.map(|n| n.other_busy_before_cores),
                    m.noise.map(|n| n.quiet_wait_s),
                    m.facts
                        .as_ref()
                        .and_then(|f| serde_json::to_string(f).ok()),
                    m.server_cpu_s,
                    net.map(|n| n.placement.as_str()),
                    net.map(|n| n.server_addr.to_string()),
                    net.map(|n| n.client_addr.to_string()),
                    net.map(|n| n.mtu),
                    net.and_then(|n| n.bandwidth).map(|b| to_i64(b.bits_per_s)),
                    net.and_then(|n| n.burst_bytes).map(to_i64),
                    m.noise.and_then(|n| n.probe_loopback_ns),
                    m.warmup
                        .as_ref()
                        .and_then(|w| serde_json::to_string(w).ok()),
                    m.server_output_cut.filter(|&n| n > 0).map(to_i64),
                ],
                |row| row.get(0),
            )
            .map_err(&failed)?;
        tx.execute("DELETE FROM samples WHERE measurement_id = ?1", params![id])
            .map_err(&failed)?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO samples (measurement_id, seq, t_s, cpu_user_s, cpu_sys_s, rss_bytes,
                                          pss_bytes, threads, voluntary_ctxt, involuntary_ctxt,
                                          processes)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )
                .map_err(&failed)?;
            for (seq, s) in m.samples.iter().enumerate() {
                insert
                    .execute(params![
                        id,
                        to_i64(seq as u64),
                        s.t_s,
                        s.cpu_user_s,
                        s.cpu_sys_s,
                        to_i64(s.rss_bytes),
                        to_i64(s.pss_bytes),
                        s.threads,
                        to_i64(s.voluntary_ctxt),
                        to_i64(s.involuntary_ctxt),
                        s.processes,
                    ])
                    .map_err(&failed)?;
            }
        }
        tx.commit().map_err(&failed)?;
        Ok(id)
    }

    /// All runs, oldest first, with their counts of ok and failed
    /// measurements.
    pub fn runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        let failed = fail(&self.path, "listing the runs");
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.suite, r.started_at, r.finished_at, r.status,
                        (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'ok'),
                        (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'failed')
                 FROM runs r
                 ORDER BY r.id",
            )
            .map_err(&failed)?;
        let rows = stmt
            .query_map([], |row| {
                Ok(RunSummary {
                    id: row.get(0)?,
                    suite: row.get(1)?,
                    started_at: row.get(2)?,
                    finished_at: row.get(3)?,
                    status: row.get(4)?,
                    ok: get_u64(row, 5)?,
                    failed: get_u64(row, 6)?,
                })
            })
            .map_err(&failed)?;
        let mut runs: Vec<RunSummary> = rows.collect::<Result<_, _>>().map_err(&failed)?;
        // After the statuses, so a run that starts meanwhile is seen held.
        let held = self.held()?;
        for r in &mut runs {
            r.status = self.live_status(&held, r.id, r.status);
        }
        Ok(runs)
    }

    /// The most recently started run, whatever its status.
    pub fn latest_run(&self) -> Result<Option<i64>, StoreError> {
        self.conn
            .query_row("SELECT max(id) FROM runs", [], |row| row.get(0))
            .map_err(fail(&self.path, "finding the latest run"))
    }

    /// Everything stored about a run.
    pub fn run(&self, id: i64) -> Result<RunDetail, StoreError> {
        let failed = fail(&self.path, "reading a run");
        // One read transaction, so a run being written by another process is
        // seen at a single moment, not half before and half after a commit.
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)
            .map_err(&failed)?;
        let head = tx
            .query_row(
                "SELECT id, suite, suite_toml, command, started_at, finished_at, status,
                        environment, placement, repetitions, work_seed, adaptive_min,
                        adaptive_max, adaptive_target, adaptive_budget_s
                 FROM runs WHERE id = ?1",
                params![id],
                |row| {
                    Ok(RunDetail {
                        events: Vec::new(),
                        id: row.get(0)?,
                        suite: row.get(1)?,
                        suite_toml: row.get(2)?,
                        command: row.get(3)?,
                        started_at: row.get(4)?,
                        finished_at: row.get(5)?,
                        status: row.get(6)?,
                        environment: get_json(row, 7)?,
                        placement: get_json(row, 8)?,
                        repetitions: row.get(9)?,
                        work_seed: row.get::<_, Option<i64>>(10)?.map(|s| s as u64),
                        adaptive: read_adaptive(row, 11)?,
                        scenarios: Vec::new(),
                        servers: Vec::new(),
                        measurements: Vec::new(),
                    })
                },
            )
            .optional()
            .map_err(&failed)?;
        let Some(mut detail) = head else {
            return Err(self.no_such_run(id));
        };
        detail.status = self.live_status(&self.held()?, id, detail.status);

        detail.scenarios = typed::read_scenarios(&tx, id).map_err(&failed)?;
        let mut stmt = tx
            .prepare(&format!(
                "SELECT server, variant, manifest_toml, build_status, build_s, artefact_bytes,
                        ready_s, verify, excluded_reason, allocator, {}
                 FROM servers WHERE run_id = ?1
                 ORDER BY server, variant",
                typed::SERVER_FACTS_COLUMNS
            ))
            .map_err(&failed)?;
        detail.servers = stmt
            .query_map(params![id], |row| {
                Ok(ServerRecord {
                    server: row.get(0)?,
                    variant: row.get(1)?,
                    manifest_toml: row.get(2)?,
                    build_status: row.get(3)?,
                    build_s: row.get(4)?,
                    artefact_bytes: get_opt_u64(row, 5)?,
                    ready_s: row.get(6)?,
                    verify_json: row.get(7)?,
                    excluded_reason: row.get(8)?,
                    allocator: row.get(9)?,
                    facts: typed::read_server_facts(row, 10)?,
                })
            })
            .map_err(&failed)?
            .collect::<Result<_, _>>()
            .map_err(&failed)?;

        let mut stmt = tx
            .prepare(
                "SELECT id, server, variant, scenario, connections, repetition, status, failure,
                        result, histogram, client_bound, started_at, duration_s,
                        probe_server_ns, probe_client_ns, probe_drift, steal, other_busy_cores,
                        other_busy_before_cores, quiet_wait_s, facts, server_cpu_s,
                        net_placement, net_server_addr, net_client_addr, net_mtu,
                        net_bandwidth_bps, net_burst_bytes, probe_loopback_ns, warmup,
                        server_output_cut
                 FROM measurements WHERE run_id = ?1
                 ORDER BY server, variant, scenario, connections, repetition",
            )
            .map_err(&failed)?;
        detail.measurements = stmt
            .query_map(params![id], |row| {
                Ok(Measurement {
                    id: Some(row.get(0)?),
                    key: CellKey {
                        server: row.get(1)?,
                        variant: row.get(2)?,
                        scenario: row.get(3)?,
                        connections: row.get(4)?,
                        repetition: row.get(5)?,
                    },
                    status: row.get(6)?,
                    failure: row.get(7)?,
                    result_json: row.get(8)?,
                    histogram: row.get(9)?,
                    client_bound: row.get(10)?,
                    started_at: row.get(11)?,
                    duration_s: row.get(12)?,
                    samples: Vec::new(),
                    noise: read_noise(row, 13, 28)?,
                    // Facts this code cannot read (a newer kind) are left
                    // out rather than failing the whole run's report.
                    facts: row
                        .get::<_, Option<String>>(20)?
                        .and_then(|j| serde_json::from_str(&j).ok()),
                    server_cpu_s: row.get(21)?,
                    network: read_network(row, 22)?,
                    // Like facts: a record this code cannot read is left out.
                    warmup: row
                        .get::<_, Option<String>>("warmup")?
                        .and_then(|j| serde_json::from_str(&j).ok()),
                    server_output_cut: row
                        .get::<_, Option<i64>>("server_output_cut")?
                        .and_then(|n| u64::try_from(n).ok()),
                })
            })
            .map_err(&failed)?
            .collect::<Result<_, _>>()
            .map_err(&failed)?;

        // All the run's samples in one query rather than one per measurement:
        // a large run has thousands of measurements.
        let index: HashMap<i64, usize> = detail
            .measurements
            .iter()
            .enumerate()
            .filter_map(|(i, m)| Some((m.id?, i)))
            .collect();
        let mut stmt = tx
            .prepare(
                "SELECT s.measurement_id, s.t_s, s.cpu_user_s, s.cpu_sys_s, s.rss_bytes,
                        s.pss_bytes, s.threads, s.voluntary_ctxt, s.involuntary_ctxt, s.processes
                 FROM samples s JOIN measurements m ON m.id = s.measurement_id
                 WHERE m.run_id = ?1
                 ORDER BY s.measurement_id, s.seq",
            )
            .map_err(&failed)?;
        let mut rows = stmt.query(params![id]).map_err(&failed)?;
        while let Some(row) = rows.next().map_err(&failed)? {
            let (measurement, sample) = read_sample(row).map_err(&failed)?;
            // Every sample's measurement is in the index: same run, same
            // snapshot.
            if let Some(&i) = index.get(&measurement) {
                detail.measurements[i].samples.push(sample);
            }
        }
        drop(rows);
        drop(stmt);
        detail.events = events::events_of(&tx, id).map_err(&failed)?;
        Ok(detail)
    }

    /// Each cell's figure so far, by server, variant, scenario and
    /// connections: what adaptive repetitions judge. The figure a cell is
    /// ranked by: its good requests/s, or at a fixed rate (where requests/s
    /// is the rate) the server's CPU per request.
    pub fn cell_figures(&self, run: i64) -> Result<HashMap<CellId, Vec<f64>>, StoreError> {
        let failed = fail(&self.path, "reading the figures of a run's cells");
        let mut stmt = self
            .conn
            .prepare(
                "SELECT server, variant, scenario, connections,
                        CASE json_extract(facts, '$.kind')
                            WHEN 'fixed-rate'
                                THEN json_extract(facts, '$.server_cpu_us_per_request')
                            ELSE json_extract(result, '$.rps')
                        END
                 FROM measurements WHERE run_id = ?1 AND status = 'ok'
                 ORDER BY repetition",
            )
            .map_err(&failed)?;
        let mut rows = stmt.query(params![run]).map_err(&failed)?;
        let mut out: HashMap<CellId, Vec<f64>> = HashMap::new();
        while let Some(row) = rows.next().map_err(&failed)? {
            let id = CellId {
                server: row.get(0).map_err(&failed)?,
                variant: row.get(1).map_err(&failed)?,
                scenario: row.get(2).map_err(&failed)?,
                connections: row.get(3).map_err(&failed)?,
            };
            let rps: Option<f64> = row.get(4).map_err(&failed)?;
            out.entry(id).or_default().extend(rps);
        }
        Ok(out)
    }

    /// The cells of a run that already have an ok measurement: what a resumed
    /// run skips.
    pub fn completed_cells(&self, run: i64) -> Result<HashSet<CellKey>, StoreError> {
        let failed = fail(&self.path, "listing the completed cells of a run");
        if !run_exists(&self.conn, run).map_err(&failed)? {
            return Err(self.no_such_run(run));
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT server, variant, scenario, connections, repetition
                 FROM measurements WHERE run_id = ?1 AND status = 'ok'",
            )
            .map_err(&failed)?;
        let rows = stmt
            .query_map(params![run], |row| {
                Ok(CellKey {
                    server: row.get(0)?,
                    variant: row.get(1)?,
                    scenario: row.get(2)?,
                    connections: row.get(3)?,
                    repetition: row.get(4)?,
                })
            })
            .map_err(&failed)?;
        rows.collect::<Result<_, _>>().map_err(&failed)
    }

    /// A write transaction. IMMEDIATE takes the write lock at once: a
    /// deferred one that reads first would fail with SQLITE_BUSY, past the
    /// busy timeout, if another process committed in between. Unchecked
    /// because the writers take `&self`: the store is not `Sync`, so there is
    /// one caller at a time, and no method nests transactions.
    fn write(&self) -> rusqlite::Result<Transaction<'_>> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
    }

    fn no_such_run(&self, run: i64) -> StoreError {
        no_such_run(&self.path, run)
    }
}

/// Refuses a file that is another program's SQLite database.
/// What SQLite's quick check finds wrong with the file (its first few
/// findings), or None when it says `ok`. A file too damaged to check at all
/// is damaged too. Reads every page once: a second or so for a large store.
fn damage(conn: &Connection) -> Option<String> {
    let found: Result<Vec<String>, rusqlite::Error> = conn
        .prepare("PRAGMA quick_check(3)")
        .and_then(|mut s| s.query_map([], |row| row.get(0))?.collect());
    match found {
        Ok(lines) if lines.len() == 1 && lines[0] == "ok" => None,
        Ok(lines) => Some(lines.join("; ")),
        Err(e) => Some(e.to_string()),
    }
}

fn refuse_foreign(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let found = open::foreign_tables(conn).map_err(|source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    match found {
        None => Ok(()),
        Some(tables) => {
            // Quoted and escaped: the names are the file's, not ours.
            let shown: Vec<String> = tables.iter().take(5).map(|t| format!("{t:?}")).collect();
            let more = tables.len().saturating_sub(shown.len());
            let mut list = format!("tables {}", shown.join(", "));
            if more > 0 {
                list.push_str(&format!(" and {more} more"));
            }
            Err(StoreError::Foreign {
                path: path.to_path_buf(),
                tables: list,
            })
        }
    }
}

/// Maps a SQLite error to a store error naming the file and what was being
/// done; a constraint violation means the caller handed over something the
/// schema forbids, which is a bug rather than a problem with the file.
fn fail<'a>(path: &'a Path, action: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + 'a {
    move |source| {
        if source.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) {
            StoreError::Rejected {
                path: path.to_path_buf(),
                action,
                source,
            }
        } else {
            StoreError::Query {
                path: path.to_path_buf(),
                action,
                source,
            }
        }
    }
}

fn no_such_run(path: &Path, run: i64) -> StoreError {
    StoreError::NoSuchRun {
        path: path.to_path_buf(),
        run,
    }
}

fn run_exists(conn: &Connection, run: i64) -> rusqlite::Result<bool> {
    conn.query_row("SELECT 1 FROM runs WHERE id = ?1", params![run], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

/// SQLite integers are signed; no byte count, context switch count or sample
/// index comes near 2^63, so saturating is only a guard.
fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn get_u64(row: &Row<'_>, idx: usize) -> rusqlite::Result<u64> {
    let v: i64 = row.get(idx)?;
    u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(idx, v))
}

fn get_opt_u64(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<u64>> {
    let v: Option<i64> = row.get(idx)?;
    v.map(|v| u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(idx, v)))
        .transpose()
}

/// A row of the samples query in [`Store::run`]: the measurement's id and
/// the sample.
fn read_sample(row: &Row<'_>) -> rusqlite::Result<(i64, Sample)> {
    let sample = Sample {
        t_s: row.get(1)?,
        cpu_user_s: row.get(2)?,
        cpu_sys_s: row.get(3)?,
        rss_bytes: get_u64(row, 4)?,
        pss_bytes: get_u64(row, 5)?,
        threads: row.get(6)?,
        voluntary_ctxt: get_u64(row, 7)?,
        involuntary_ctxt: get_u64(row, 8)?,
        processes: row.get(9)?,
    };
    Ok((row.get(0)?, sample))
}

/// The adaptive-repetition columns from `at` on; None for a fixed count.
fn read_adaptive(row: &Row<'_>, at: usize) -> rusqlite::Result<Option<Adaptive>> {
    let Some(min) = row.get::<_, Option<u32>>(at)? else {
        return Ok(None);
    };
    Ok(Some(Adaptive {
        min,
        max: row.get::<_, Option<u32>>(at + 1)?.unwrap_or(min),
        target: row.get::<_, Option<f64>>(at + 2)?.unwrap_or(0.05),
        budget: Duration::from_secs_f64(row.get::<_, Option<f64>>(at + 3)?.unwrap_or(0.0)),
    }))
}

/// The noise columns from `at` on, and the loopback probe (a later column)
/// at `loopback_at`; None when the measurement has none.
fn read_noise(row: &Row<'_>, at: usize, loopback_at: usize) -> rusqlite::Result<Option<Noise>> {
    let Some(probe_server_ns) = row.get::<_, Option<f64>>(at)? else {
        return Ok(None);
    };
    Ok(Some(Noise {
        probe_server_ns,
        probe_client_ns: row.get::<_, Option<f64>>(at + 1)?.unwrap_or(0.0),
        probe_loopback_ns: row.get(loopback_at)?,
        probe_drift: row.get::<_, Option<f64>>(at + 2)?.unwrap_or(0.0),
        steal: row.get::<_, Option<f64>>(at + 3)?.unwrap_or(0.0),
        other_busy_cores: row.get::<_, Option<f64>>(at + 4)?.unwrap_or(0.0),
        other_busy_before_cores: row.get::<_, Option<f64>>(at + 5)?.unwrap_or(0.0),
        quiet_wait_s: row.get::<_, Option<f64>>(at + 6)?.unwrap_or(0.0),
    }))
}

/// The network columns from `at` on; None when the measurement has none.
/// A placement or address this code cannot read (a newer netbench's) is
/// left out rather than failing the whole run's report.
fn read_network(row: &Row<'_>, at: usize) -> rusqlite::Result<Option<NetworkPath>> {
    let Some(placement) = row
        .get::<_, Option<String>>(at)?
        .as_deref()
        .and_then(NetPlacement::parse)
    else {
        return Ok(None);
    };
    let addr = |i: usize| -> rusqlite::Result<Option<std::net::IpAddr>> {
        Ok(row
            .get::<_, Option<String>>(i)?
            .and_then(|a| a.parse().ok()))
    };
    let (Some(server_addr), Some(client_addr)) = (addr(at + 1)?, addr(at + 2)?) else {
        return Ok(None);
    };
    Ok(Some(NetworkPath {
        placement,
        server_addr,
        client_addr,
        mtu: row.get::<_, Option<u32>>(at + 3)?.unwrap_or(0),
        bandwidth: get_opt_u64(row, at + 4)?.map(|bits_per_s| Bandwidth { bits_per_s }),
        burst_bytes: get_opt_u64(row, at + 5)?,
    }))
}

fn get_json(row: &Row<'_>, idx: usize) -> rusqlite::Result<serde_json::Value> {
    let text: String = row.get(idx)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

#[cfg(test)]
mod tests;
