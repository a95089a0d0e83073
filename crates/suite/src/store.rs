//! The results store: one SQLite file holding every run, the servers in it,
//! each measurement with its raw result, histogram and /proc samples, so any
//! report can be rebuilt from the file alone. Each record is committed on its
//! own as soon as it is known, so a crash or Ctrl-C loses nothing finished.

mod schema;
mod timestamp;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{
    params, Connection, ErrorCode, OptionalExtension, Row, ToSql, Transaction, TransactionBehavior,
};

pub use schema::SCHEMA_VERSION;
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

/// Enumerations stored as their lowercase names, so the file reads well in
/// `sqlite3` and the schema's CHECKs can list them.
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// The name stored in the database.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                match value.as_str()? {
                    $($text => Ok(Self::$variant),)+
                    other => Err(FromSqlError::Other(
                        format!("{other:?} is not a {}", stringify!($name)).into(),
                    )),
                }
            }
        }
    };
}

text_enum! {
    /// Where a run stands.
    RunStatus {
        /// Started and not finished; also what a crashed run looks like.
        Running = "running",
        /// Every cell of the matrix was attempted.
        Complete = "complete",
        /// Stopped by the user (Ctrl-C); can be resumed.
        Interrupted = "interrupted",
        /// Stopped by an error in netbench itself, not in a server.
        Failed = "failed",
    }
}

text_enum! {
    /// How a server's build went.
    BuildStatus {
        Ok = "ok",
        Failed = "failed",
        /// Not attempted, e.g. its toolchain is missing.
        Skipped = "skipped",
    }
}

text_enum! {
    /// Whether a measurement produced a result.
    MeasurementStatus {
        Ok = "ok",
        Failed = "failed",
    }
}

/// What is known about a run when it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    pub suite: String,
    /// The suite file's full text, so the run can be understood (and
    /// repeated) after the file has changed.
    pub suite_toml: String,
    /// The command line that started the run.
    pub command: String,
    /// CPU model, cores, memory, kernel, tool and compiler versions, project
    /// commit: whatever the caller gathered.
    pub environment: serde_json::Value,
    /// Which CPUs the server and the client were pinned to.
    pub placement: serde_json::Value,
}

/// One server variant in a run: how it was built and whether it took part.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRecord {
    pub server: String,
    /// "" for the default variant.
    pub variant: String,
    pub manifest_toml: String,
    pub build_status: BuildStatus,
    /// 0 when the build was skipped.
    pub build_s: f64,
    pub artefact_bytes: Option<u64>,
    /// From start to the first good answer; None when it never got there.
    pub ready_s: Option<f64>,
    /// The contract verification's outcome, as JSON text.
    pub verify_json: Option<String>,
    /// Why the server was left out of the run (missing toolchain, build
    /// failure with its last output lines, verify failure); None when it took
    /// part.
    pub excluded_reason: Option<String>,
}

/// One cell of the run matrix: what a measurement is of.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellKey {
    pub server: String,
    /// "" for the default variant.
    pub variant: String,
    pub scenario: String,
    pub connections: u32,
    /// 1-based.
    pub repetition: u32,
}

/// One /proc sample of the server's process tree, taken during a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SampleRow {
    /// Seconds since the measurement started.
    pub t_s: f64,
    /// Cumulative over the process tree.
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub rss_bytes: u64,
    pub pss_bytes: u64,
    pub threads: u32,
    /// Cumulative over the process tree.
    pub voluntary_ctxt: u64,
    pub involuntary_ctxt: u64,
    pub processes: u32,
}

/// One measurement as the runner hands it over.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasurementRecord {
    pub key: CellKey,
    pub status: MeasurementStatus,
    /// Required when the status is failed.
    pub failure: Option<String>,
    /// The engine's full result; required when the status is ok.
    pub result_json: Option<String>,
    /// The serialized latency HdrHistogram.
    pub histogram: Option<Vec<u8>>,
    /// The client, not the server, was the limit.
    pub client_bound: bool,
    pub started_at: SystemTime,
    pub duration_s: f64,
    pub samples: Vec<SampleRow>,
}

/// One measurement as read back from the store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMeasurement {
    pub id: i64,
    pub key: CellKey,
    pub status: MeasurementStatus,
    pub failure: Option<String>,
    pub result_json: Option<String>,
    pub histogram: Option<Vec<u8>>,
    pub client_bound: bool,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub duration_s: f64,
    /// In the order they were taken.
    pub samples: Vec<SampleRow>,
}

/// A line of the list of runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub suite: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    /// Measurements that succeeded.
    pub ok: u64,
    /// Measurements that failed.
    pub failed: u64,
}

/// Everything stored about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDetail {
    pub id: i64,
    pub suite: String,
    pub suite_toml: String,
    pub command: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub environment: serde_json::Value,
    pub placement: serde_json::Value,
    /// Ordered by server, then variant.
    pub servers: Vec<ServerRecord>,
    /// Ordered by cell key.
    pub measurements: Vec<StoredMeasurement>,
}

/// An open results store. Writers take `&self`, like readers, so a runner
/// can share it between its steps; it is not `Sync`, so one thread uses it at
/// a time.
pub struct Store {
    conn: Connection,
    path: PathBuf,
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
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Store::prepare(conn, path.to_path_buf())
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
        Ok(Store { conn, path })
    }

    /// Where the store lives (":memory:" for an in-memory one).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records the start of a run, with status running; returns its id.
    pub fn begin_run(&self, run: &NewRun) -> Result<i64, StoreError> {
        self.conn
            .query_row(
                "INSERT INTO runs (suite, suite_toml, command, started_at, status, environment, placement)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 RETURNING id",
                params![
                    run.suite,
                    run.suite_toml,
                    run.command,
                    rfc3339(SystemTime::now()),
                    RunStatus::Running,
                    run.environment.to_string(),
                    run.placement.to_string(),
                ],
                |row| row.get(0),
            )
            .map_err(fail(&self.path, "recording the start of a run"))
    }

    /// Sets a run's status; any status but running also sets its finished
    /// time to now, and running (a resumed run) clears it.
    pub fn set_run_status(&self, run: i64, status: RunStatus) -> Result<(), StoreError> {
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
                                  artefact_bytes, ready_s, verify, excluded_reason)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (run_id, server, variant) DO UPDATE SET
                 manifest_toml = excluded.manifest_toml,
                 build_status = excluded.build_status,
                 build_s = excluded.build_s,
                 artefact_bytes = excluded.artefact_bytes,
                 ready_s = excluded.ready_s,
                 verify = excluded.verify,
                 excluded_reason = excluded.excluded_reason",
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
            ],
        )
        .map_err(&failed)?;
        tx.commit().map_err(&failed)
    }

    /// Records a measurement and its samples in one transaction, replacing an
    /// earlier measurement of the same cell (a failed cell retried on resume);
    /// returns its id, which stays the same across replacements. The server
    /// must have been recorded first.
    pub fn record_measurement(&self, run: i64, m: &MeasurementRecord) -> Result<i64, StoreError> {
        let failed = fail(&self.path, "recording a measurement");
        let tx = self.write().map_err(&failed)?;
        if !run_exists(&tx, run).map_err(&failed)? {
            return Err(no_such_run(&self.path, run));
        }
        let k = &m.key;
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
                                           started_at, duration_s)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                 ON CONFLICT (run_id, server, variant, scenario, connections, repetition) DO UPDATE SET
                     status = excluded.status,
                     failure = excluded.failure,
                     result = excluded.result,
                     histogram = excluded.histogram,
                     client_bound = excluded.client_bound,
                     started_at = excluded.started_at,
                     duration_s = excluded.duration_s
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
                    rfc3339(m.started_at),
                    m.duration_s,
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
        rows.collect::<Result<_, _>>().map_err(&failed)
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
                        environment, placement
                 FROM runs WHERE id = ?1",
                params![id],
                |row| {
                    Ok(RunDetail {
                        id: row.get(0)?,
                        suite: row.get(1)?,
                        suite_toml: row.get(2)?,
                        command: row.get(3)?,
                        started_at: row.get(4)?,
                        finished_at: row.get(5)?,
                        status: row.get(6)?,
                        environment: get_json(row, 7)?,
                        placement: get_json(row, 8)?,
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

        let mut stmt = tx
            .prepare(
                "SELECT server, variant, manifest_toml, build_status, build_s, artefact_bytes,
                        ready_s, verify, excluded_reason
                 FROM servers WHERE run_id = ?1
                 ORDER BY server, variant",
            )
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
                })
            })
            .map_err(&failed)?
            .collect::<Result<_, _>>()
            .map_err(&failed)?;

        let mut stmt = tx
            .prepare(
                "SELECT id, server, variant, scenario, connections, repetition, status, failure,
                        result, histogram, client_bound, started_at, duration_s
                 FROM measurements WHERE run_id = ?1
                 ORDER BY server, variant, scenario, connections, repetition",
            )
            .map_err(&failed)?;
        detail.measurements = stmt
            .query_map(params![id], |row| {
                Ok(StoredMeasurement {
                    id: row.get(0)?,
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
            .map(|(i, m)| (m.id, i))
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
        Ok(detail)
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
fn read_sample(row: &Row<'_>) -> rusqlite::Result<(i64, SampleRow)> {
    let sample = SampleRow {
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

fn get_json(row: &Row<'_>, idx: usize) -> rusqlite::Result<serde_json::Value> {
    let text: String = row.get(idx)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::UNIX_EPOCH;

    /// A directory of its own under the system's temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "netbench-store-{name}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn new_run(suite: &str) -> NewRun {
        NewRun {
            suite: suite.into(),
            suite_toml: format!("name = \"{suite}\"\nrepetitions = 3\n"),
            command: format!("netbench run suites/{suite}.toml"),
            environment: json!({"cpu": "Test CPU", "cores": 2, "kernel": "6.1", "commit": "abc123"}),
            placement: json!({"server": [0], "client": [1]}),
        }
    }

    fn server(name: &str, variant: &str) -> ServerRecord {
        ServerRecord {
            server: name.into(),
            variant: variant.into(),
            manifest_toml: format!("name = \"{name}\"\nrun = \"./server\"\n"),
            build_status: BuildStatus::Ok,
            build_s: 1.5,
            artefact_bytes: Some(123_456),
            ready_s: Some(0.25),
            verify_json: Some(r#"{"passed":12,"failed":0}"#.into()),
            excluded_reason: None,
        }
    }

    fn key(server: &str, scenario: &str, connections: u32, repetition: u32) -> CellKey {
        CellKey {
            server: server.into(),
            variant: String::new(),
            scenario: scenario.into(),
            connections,
            repetition,
        }
    }

    fn sample(t_s: f64) -> SampleRow {
        SampleRow {
            t_s,
            cpu_user_s: t_s * 0.8,
            cpu_sys_s: t_s * 0.1,
            rss_bytes: 10 << 20,
            // Beyond u32, to see 64-bit values survive.
            pss_bytes: 5 << 32,
            threads: 4,
            voluntary_ctxt: 1000 + t_s as u64,
            involuntary_ctxt: 7,
            processes: 1,
        }
    }

    fn ok(key: CellKey, samples: usize) -> MeasurementRecord {
        MeasurementRecord {
            key,
            status: MeasurementStatus::Ok,
            failure: None,
            result_json: Some(r#"{"requests":1000,"rps":500.0}"#.into()),
            histogram: Some(vec![0x1c, 0x84, 0x93, 0x14, 0, 0xff]),
            client_bound: true,
            started_at: UNIX_EPOCH + Duration::from_millis(1_700_000_000_042),
            duration_s: 2.0,
            samples: (0..samples).map(|i| sample(i as f64 / 10.0)).collect(),
        }
    }

    fn failed(key: CellKey, why: &str) -> MeasurementRecord {
        MeasurementRecord {
            key,
            status: MeasurementStatus::Failed,
            failure: Some(why.into()),
            result_json: None,
            histogram: None,
            client_bound: false,
            started_at: UNIX_EPOCH,
            duration_s: 0.5,
            samples: Vec::new(),
        }
    }

    fn pragma<T: FromSql>(store: &Store, name: &str) -> T {
        store
            .conn
            .pragma_query_value(None, name, |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn opening_a_new_file_creates_its_directories_and_schema() {
        let tmp = TempDir::new("new");
        let path = tmp.0.join("results/deeper/netbench.sqlite");
        let store = Store::open(&path).unwrap();
        assert!(path.is_file());
        assert_eq!(store.path(), path);
        assert_eq!(pragma::<u32>(&store, "user_version"), SCHEMA_VERSION);
        assert_eq!(pragma::<String>(&store, "journal_mode"), "wal");
        assert!(pragma::<bool>(&store, "foreign_keys"));
        assert_eq!(pragma::<i64>(&store, "busy_timeout"), 10_000);
        assert!(store.runs().unwrap().is_empty());
        assert_eq!(store.latest_run().unwrap(), None);
    }

    #[test]
    fn reopening_a_file_keeps_its_data_and_version() {
        let tmp = TempDir::new("reopen");
        let path = tmp.0.join("netbench.sqlite");
        let id = {
            let store = Store::open(&path).unwrap();
            let id = store.begin_run(&new_run("quick")).unwrap();
            store.record_server(id, &server("a", "")).unwrap();
            store
                .record_measurement(id, &ok(key("a", "blank", 1, 1), 3))
                .unwrap();
            id
        };
        for _ in 0..2 {
            let store = Store::open(&path).unwrap();
            assert_eq!(pragma::<u32>(&store, "user_version"), SCHEMA_VERSION);
            assert_eq!(store.latest_run().unwrap(), Some(id));
            let detail = store.run(id).unwrap();
            assert_eq!(detail.measurements.len(), 1);
            assert_eq!(detail.measurements[0].samples.len(), 3);
        }
    }

    #[test]
    fn each_record_is_committed_when_it_is_written() {
        // What a crash or Ctrl-C would leave: another connection sees every
        // record while the writer is still open, mid-run.
        let tmp = TempDir::new("commit");
        let path = tmp.0.join("netbench.sqlite");
        let store = Store::open(&path).unwrap();
        let id = store.begin_run(&new_run("quick")).unwrap();
        store.record_server(id, &server("a", "")).unwrap();
        store
            .record_measurement(id, &ok(key("a", "blank", 1, 1), 2))
            .unwrap();
        let reader = Store::open(&path).unwrap();
        let detail = reader.run(id).unwrap();
        assert_eq!(detail.status, RunStatus::Running);
        assert_eq!(detail.servers.len(), 1);
        assert_eq!(detail.measurements[0].samples.len(), 2);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let tmp = TempDir::new("newer");
        let path = tmp.0.join("netbench.sqlite");
        drop(Store::open(&path).unwrap());
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let err = Store::open(&path)
            .err()
            .expect("a newer schema must be refused");
        assert!(
            matches!(err, StoreError::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains("made by a newer netbench; upgrade or use another --db"),
            "{message}"
        );
        assert!(message.contains("netbench.sqlite"), "{message}");
    }

    #[test]
    fn a_file_that_is_not_a_database_is_an_open_error() {
        let tmp = TempDir::new("junk");
        std::fs::create_dir_all(&tmp.0).unwrap();
        let path = tmp.0.join("notes.txt");
        std::fs::write(
            &path,
            "these are not the results you are looking for\n".repeat(100),
        )
        .unwrap();
        let err = Store::open(&path).err().expect("junk must be refused");
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
        assert!(err.to_string().contains("--db"), "{err}");
    }

    #[test]
    fn a_run_round_trips_with_servers_measurements_and_samples() {
        let store = Store::open_in_memory().unwrap();
        let run = new_run("standard");
        let id = store.begin_run(&run).unwrap();

        let a = server("a", "");
        let mut a_mi = server("a", "mimalloc");
        a_mi.artefact_bytes = None;
        a_mi.ready_s = None;
        a_mi.verify_json = None;
        let mut b = server("b", "");
        b.build_status = BuildStatus::Failed;
        b.excluded_reason =
            Some("build failed (exit status 1); its last output:\nerror[E0425]".into());
        for s in [&b, &a_mi, &a] {
            store.record_server(id, s).unwrap();
        }

        let mut m2 = ok(key("a", "blank", 64, 1), 0);
        m2.key.variant = "mimalloc".into();
        m2.client_bound = false;
        let records = [
            ok(key("a", "blank", 1, 1), 25),
            m2,
            failed(key("a", "work", 1, 1), "connection refused"),
        ];
        let mut ids = Vec::new();
        for r in &records {
            ids.push(store.record_measurement(id, r).unwrap());
        }
        store.set_run_status(id, RunStatus::Complete).unwrap();

        let detail = store.run(id).unwrap();
        assert_eq!(detail.id, id);
        assert_eq!(detail.suite, run.suite);
        assert_eq!(detail.suite_toml, run.suite_toml);
        assert_eq!(detail.command, run.command);
        assert_eq!(detail.environment, run.environment);
        assert_eq!(detail.placement, run.placement);
        assert_eq!(detail.status, RunStatus::Complete);
        assert_eq!(detail.started_at.len(), "2024-01-01T00:00:00.000Z".len());
        assert!(detail.finished_at.as_deref() >= Some(detail.started_at.as_str()));
        // Ordered by server, then variant ("" first).
        assert_eq!(detail.servers, [a, a_mi, b]);

        // Ordered by cell key: variant "" before "mimalloc", "blank" before "work".
        let order = [0, 2, 1];
        assert_eq!(detail.measurements.len(), 3);
        for (stored, &i) in detail.measurements.iter().zip(&order) {
            let r = &records[i];
            assert_eq!(stored.id, ids[i]);
            assert_eq!(stored.key, r.key);
            assert_eq!(stored.status, r.status);
            assert_eq!(stored.failure, r.failure);
            assert_eq!(stored.result_json, r.result_json);
            assert_eq!(stored.histogram, r.histogram);
            assert_eq!(stored.client_bound, r.client_bound);
            assert_eq!(stored.started_at, rfc3339(r.started_at));
            assert_eq!(stored.duration_s, r.duration_s);
            assert_eq!(stored.samples, r.samples);
        }
        assert_eq!(
            detail.measurements[0].started_at,
            "2023-11-14T22:13:20.042Z"
        );
    }

    #[test]
    fn a_resumed_run_updates_its_rows() {
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run(&new_run("quick")).unwrap();

        let mut first = server("a", "");
        first.build_status = BuildStatus::Failed;
        first.excluded_reason = Some("build failed".into());
        store.record_server(id, &first).unwrap();
        let cell = key("a", "blank", 8, 2);
        let failed_id = store
            .record_measurement(id, &failed(cell.clone(), "timed out"))
            .unwrap();
        store.set_run_status(id, RunStatus::Interrupted).unwrap();

        // The resume: the server builds this time and the cell is retried.
        store.set_run_status(id, RunStatus::Running).unwrap();
        let second = server("a", "");
        store.record_server(id, &second).unwrap();
        let retried = ok(cell.clone(), 4);
        let ok_id = store.record_measurement(id, &retried).unwrap();
        assert_eq!(ok_id, failed_id, "a retried cell keeps its row");

        let detail = store.run(id).unwrap();
        assert_eq!(detail.servers, [second]);
        assert_eq!(detail.measurements.len(), 1);
        let m = &detail.measurements[0];
        assert_eq!(m.status, MeasurementStatus::Ok);
        assert_eq!(m.failure, None);
        assert_eq!(m.samples, retried.samples);

        // Replacing a measurement replaces its samples, not adds to them.
        let fewer = ok(cell, 1);
        store.record_measurement(id, &fewer).unwrap();
        let samples: i64 = store
            .conn
            .query_row("SELECT count(*) FROM samples", [], |row| row.get(0))
            .unwrap();
        assert_eq!(samples, 1);
    }

    #[test]
    fn completed_cells_are_the_ok_measurements_of_that_run() {
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run(&new_run("quick")).unwrap();
        let other = store.begin_run(&new_run("quick")).unwrap();
        for run in [id, other] {
            store.record_server(run, &server("a", "")).unwrap();
        }
        store
            .record_measurement(id, &ok(key("a", "blank", 1, 1), 0))
            .unwrap();
        store
            .record_measurement(id, &ok(key("a", "blank", 1, 2), 0))
            .unwrap();
        store
            .record_measurement(id, &failed(key("a", "blank", 64, 1), "refused"))
            .unwrap();
        store
            .record_measurement(other, &ok(key("a", "work", 1, 1), 0))
            .unwrap();

        let done = store.completed_cells(id).unwrap();
        let expected: HashSet<CellKey> = [key("a", "blank", 1, 1), key("a", "blank", 1, 2)].into();
        assert_eq!(done, expected);
        assert!(store
            .completed_cells(other + 1)
            .unwrap_err()
            .to_string()
            .contains("no run"));
    }

    #[test]
    fn runs_are_listed_with_their_counts() {
        let store = Store::open_in_memory().unwrap();
        let first = store.begin_run(&new_run("quick")).unwrap();
        let second = store.begin_run(&new_run("standard")).unwrap();
        let empty = store.begin_run(&new_run("stress")).unwrap();
        for run in [first, second] {
            store.record_server(run, &server("a", "")).unwrap();
        }
        for rep in 1..=3 {
            store
                .record_measurement(first, &ok(key("a", "blank", 1, rep), 1))
                .unwrap();
        }
        store
            .record_measurement(first, &failed(key("a", "blank", 8, 1), "x"))
            .unwrap();
        store
            .record_measurement(second, &failed(key("a", "blank", 8, 1), "x"))
            .unwrap();
        store.set_run_status(first, RunStatus::Complete).unwrap();
        store.set_run_status(second, RunStatus::Failed).unwrap();

        let runs = store.runs().unwrap();
        let brief: Vec<_> = runs
            .iter()
            .map(|r| (r.id, r.suite.as_str(), r.status, r.ok, r.failed))
            .collect();
        assert_eq!(
            brief,
            [
                (first, "quick", RunStatus::Complete, 3, 1),
                (second, "standard", RunStatus::Failed, 0, 1),
                (empty, "stress", RunStatus::Running, 0, 0),
            ]
        );
        assert!(runs[0].finished_at.is_some());
        assert!(runs[2].finished_at.is_none());
        assert_eq!(store.latest_run().unwrap(), Some(empty));
    }

    #[test]
    fn finishing_sets_finished_at_and_resuming_clears_it() {
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run(&new_run("quick")).unwrap();
        assert_eq!(store.run(id).unwrap().finished_at, None);

        store.set_run_status(id, RunStatus::Interrupted).unwrap();
        let detail = store.run(id).unwrap();
        assert_eq!(detail.status, RunStatus::Interrupted);
        let finished = detail.finished_at.expect("an interrupted run has finished");
        assert!(
            finished >= detail.started_at,
            "{finished} < {}",
            detail.started_at
        );

        store.set_run_status(id, RunStatus::Running).unwrap();
        assert_eq!(store.run(id).unwrap().finished_at, None);

        let err = store
            .set_run_status(id + 1, RunStatus::Complete)
            .unwrap_err();
        assert!(
            matches!(err, StoreError::NoSuchRun { run, .. } if run == id + 1),
            "{err:?}"
        );
    }

    #[test]
    fn records_for_unknown_runs_or_servers_are_refused() {
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run(&new_run("quick")).unwrap();
        let m = ok(key("a", "blank", 1, 1), 2);

        let err = store.record_server(id + 1, &server("a", "")).unwrap_err();
        assert!(matches!(err, StoreError::NoSuchRun { .. }), "{err:?}");
        let err = store.record_measurement(id + 1, &m).unwrap_err();
        assert!(matches!(err, StoreError::NoSuchRun { .. }), "{err:?}");
        let err = store.record_measurement(id, &m).unwrap_err();
        assert!(matches!(err, StoreError::NoSuchServer { .. }), "{err:?}");
        assert!(
            err.to_string().contains("record the server before"),
            "{err}"
        );
        assert!(matches!(
            store.run(id + 1),
            Err(StoreError::NoSuchRun { .. })
        ));
        // Nothing half-written was left behind.
        assert!(store.run(id).unwrap().measurements.is_empty());
    }

    #[test]
    fn records_the_schema_forbids_are_rejected_whole() {
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run(&new_run("quick")).unwrap();
        store.record_server(id, &server("a", "")).unwrap();

        let mut not_json = ok(key("a", "blank", 1, 1), 3);
        not_json.result_json = Some("{not json".into());
        let mut no_result = ok(key("a", "blank", 1, 2), 3);
        no_result.result_json = None;
        let mut no_reason = failed(key("a", "blank", 1, 3), "x");
        no_reason.failure = None;
        for bad in [not_json, no_result, no_reason] {
            let err = store.record_measurement(id, &bad).unwrap_err();
            assert!(matches!(err, StoreError::Rejected { .. }), "{err:?}");
            assert!(err.to_string().contains("bug in netbench"), "{err}");
        }
        let samples: i64 = store
            .conn
            .query_row("SELECT count(*) FROM samples", [], |row| row.get(0))
            .unwrap();
        assert_eq!(samples, 0);
        assert!(store.run(id).unwrap().measurements.is_empty());

        let mut bad_verify = server("b", "");
        bad_verify.verify_json = Some("passed".into());
        let err = store.record_server(id, &bad_verify).unwrap_err();
        assert!(matches!(err, StoreError::Rejected { .. }), "{err:?}");
    }

    #[test]
    fn enumerations_round_trip_through_their_names() {
        for s in [
            RunStatus::Running,
            RunStatus::Complete,
            RunStatus::Interrupted,
            RunStatus::Failed,
        ] {
            let back = RunStatus::column_result(ValueRef::Text(s.as_str().as_bytes())).unwrap();
            assert_eq!(back, s);
        }
        assert_eq!(BuildStatus::Skipped.to_string(), "skipped");
        assert!(MeasurementStatus::column_result(ValueRef::Text(b"meh")).is_err());
    }
}
