//! The store's schema and its migrations: the version lives in
//! `PRAGMA user_version`, and each migration takes a file one version up in a
//! transaction of its own.

use rusqlite::{Connection, TransactionBehavior};

/// Migration `i` takes a file from schema version `i` to `i + 1`. Append new
/// scripts; never edit one that has shipped, since files made with it exist.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: runs, the servers in them, their measurements and /proc samples.
    //
    // STRICT so a wrong type is an error rather than a silently stored string;
    // the CHECKs keep the enumerations and JSON columns honest for anything
    // that reads the file without this code (sqlite3, a notebook).
    r#"
CREATE TABLE runs (
    -- AUTOINCREMENT: a run id quoted in a report never comes to mean another run.
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    suite       TEXT NOT NULL,
    suite_toml  TEXT NOT NULL,
    command     TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    status      TEXT NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    environment TEXT NOT NULL CHECK (json_valid(environment)),
    placement   TEXT NOT NULL CHECK (json_valid(placement))
) STRICT;

CREATE TABLE servers (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    server          TEXT NOT NULL,
    variant         TEXT NOT NULL DEFAULT '',
    manifest_toml   TEXT NOT NULL,
    build_status    TEXT NOT NULL CHECK (build_status IN ('ok', 'failed', 'skipped')),
    build_s         REAL NOT NULL CHECK (build_s >= 0),
    artefact_bytes  INTEGER CHECK (artefact_bytes >= 0),
    ready_s         REAL CHECK (ready_s >= 0),
    verify          TEXT CHECK (verify IS NULL OR json_valid(verify)),
    -- Why the server was left out of the run; NULL when it took part.
    excluded_reason TEXT,
    PRIMARY KEY (run_id, server, variant)
) STRICT;

CREATE TABLE measurements (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    server       TEXT NOT NULL,
    variant      TEXT NOT NULL,
    scenario     TEXT NOT NULL,
    connections  INTEGER NOT NULL CHECK (connections >= 0),
    repetition   INTEGER NOT NULL CHECK (repetition >= 1),
    status       TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    failure      TEXT,
    result       TEXT CHECK (result IS NULL OR json_valid(result)),
    histogram    BLOB,
    client_bound INTEGER NOT NULL CHECK (client_bound IN (0, 1)),
    started_at   TEXT NOT NULL,
    duration_s   REAL NOT NULL CHECK (duration_s >= 0),
    CONSTRAINT ok_has_result CHECK (status <> 'ok' OR result IS NOT NULL),
    CONSTRAINT failed_has_reason CHECK (status <> 'failed' OR failure IS NOT NULL),
    UNIQUE (run_id, server, variant, scenario, connections, repetition),
    -- A measurement is of a recorded server, so a report always has its manifest.
    FOREIGN KEY (run_id, server, variant)
        REFERENCES servers (run_id, server, variant) ON DELETE CASCADE
) STRICT;

-- seq keeps the sampler's order even if two samples share a t_s; WITHOUT ROWID
-- because the key is the only way these rows are ever read.
CREATE TABLE samples (
    measurement_id   INTEGER NOT NULL REFERENCES measurements (id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,
    t_s              REAL NOT NULL,
    cpu_user_s       REAL NOT NULL,
    cpu_sys_s        REAL NOT NULL,
    rss_bytes        INTEGER NOT NULL,
    pss_bytes        INTEGER NOT NULL,
    threads          INTEGER NOT NULL,
    voluntary_ctxt   INTEGER NOT NULL,
    involuntary_ctxt INTEGER NOT NULL,
    processes        INTEGER NOT NULL,
    PRIMARY KEY (measurement_id, seq)
) STRICT, WITHOUT ROWID;
"#,
    // 2: the run's repetitions override and work seed as typed columns; both
    // used to travel inside other text (the suite's TOML, the environment's
    // JSON). An old run's seed is carried over; its repetitions stay NULL,
    // since its stored suite text already says them.
    r#"
ALTER TABLE runs ADD COLUMN repetitions INTEGER CHECK (repetitions IS NULL OR repetitions >= 1);
ALTER TABLE runs ADD COLUMN work_seed INTEGER;
UPDATE runs SET work_seed = json_extract(environment, '$.work_seed')
 WHERE json_type(environment, '$.work_seed') = 'integer';
"#,
    // 3: the machine-speed control and the noise around each measurement
    // (crates/suite/src/noise.rs); NULL for measurements made before.
    r#"
ALTER TABLE measurements ADD COLUMN probe_server_ns REAL CHECK (probe_server_ns IS NULL OR probe_server_ns > 0);
ALTER TABLE measurements ADD COLUMN probe_client_ns REAL CHECK (probe_client_ns IS NULL OR probe_client_ns > 0);
ALTER TABLE measurements ADD COLUMN probe_drift REAL;
ALTER TABLE measurements ADD COLUMN steal REAL CHECK (steal IS NULL OR steal >= 0);
ALTER TABLE measurements ADD COLUMN other_busy_cores REAL CHECK (other_busy_cores IS NULL OR other_busy_cores >= 0);
ALTER TABLE measurements ADD COLUMN other_busy_before_cores REAL CHECK (other_busy_before_cores IS NULL OR other_busy_before_cores >= 0);
ALTER TABLE measurements ADD COLUMN quiet_wait_s REAL CHECK (quiet_wait_s IS NULL OR quiet_wait_s >= 0);
-- Adaptive repetitions as the run used them (from its suite file or from
-- --repetitions auto); NULL for a fixed count.
ALTER TABLE runs ADD COLUMN adaptive_min INTEGER CHECK (adaptive_min IS NULL OR adaptive_min >= 2);
ALTER TABLE runs ADD COLUMN adaptive_max INTEGER;
ALTER TABLE runs ADD COLUMN adaptive_target REAL;
ALTER TABLE runs ADD COLUMN adaptive_budget_s REAL;
"#,
    // 4: the C-level allocator a server variant ran with, after the runner
    // checked it was the one loaded (crates/suite/src/allocator.rs); NULL for
    // a runtime with its own allocator, and for servers recorded before.
    r#"
ALTER TABLE servers ADD COLUMN allocator TEXT
    CHECK (allocator IS NULL OR allocator IN ('glibc', 'jemalloc', 'mimalloc', 'tcmalloc'));
"#,
    // 5: scenario kinds beyond throughput (crates/suite/src/kinds): each
    // measurement's kind-specific facts as tagged JSON, and the server's
    // process-tree CPU over the measured window, read at its edges.
    r#"
ALTER TABLE measurements ADD COLUMN facts TEXT
    CHECK (facts IS NULL OR (json_valid(facts) AND json_type(facts, '$.kind') = 'text'));
ALTER TABLE measurements ADD COLUMN server_cpu_s REAL CHECK (server_cpu_s IS NULL OR server_cpu_s >= 0);
"#,
    // 6: the network path of each measurement (crates/suite/src/netns.rs):
    // loopback, or a network namespace over a veth pair, its addresses and
    // MTU, and tbf's rate and bucket when shaped; NULL for measurements made
    // before (all on loopback) and for failed ones.
    r#"
ALTER TABLE measurements ADD COLUMN net_placement TEXT
    CHECK (net_placement IS NULL OR net_placement IN ('loopback', 'netns'));
ALTER TABLE measurements ADD COLUMN net_server_addr TEXT;
ALTER TABLE measurements ADD COLUMN net_client_addr TEXT;
ALTER TABLE measurements ADD COLUMN net_mtu INTEGER CHECK (net_mtu IS NULL OR net_mtu > 0);
ALTER TABLE measurements ADD COLUMN net_bandwidth_bps INTEGER
    CHECK (net_bandwidth_bps IS NULL OR net_bandwidth_bps > 0);
ALTER TABLE measurements ADD COLUMN net_burst_bytes INTEGER
    CHECK (net_burst_bytes IS NULL OR net_burst_bytes > 0);
"#,
    // 7: the loopback control (crates/suite/src/loopback_probe.rs) beside the
    // CPU probe; NULL for measurements made before.
    r#"
ALTER TABLE measurements ADD COLUMN probe_loopback_ns REAL
    CHECK (probe_loopback_ns IS NULL OR probe_loopback_ns > 0);
"#,
    // 8: the warm phase before each measured window (crates/suite/src/warm.rs,
    // crates/records/src/run.rs `WarmUp`) as JSON; NULL for a fixed warm-up and before.
    r#"
ALTER TABLE measurements ADD COLUMN warmup TEXT
    CHECK (warmup IS NULL OR (json_valid(warmup) AND json_type(warmup, '$.curve') = 'array'));
"#,
    // 9: typed records of a run's scenarios and of what each server variant
    // is (netbench-records' ScenarioRecord and ServerFacts), written when the
    // run begins so readers never parse the stored suite file or manifests.
    // Runs stored before get them from those texts in the same step
    // (`backfill` below).
    r#"
CREATE TABLE scenarios (
    run_id                  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position                INTEGER NOT NULL CHECK (position >= 0),
    name                    TEXT NOT NULL,
    kind                    TEXT NOT NULL,
    endpoint                TEXT NOT NULL,
    connections             TEXT NOT NULL
                            CHECK (json_valid(connections) AND json_type(connections) = 'array'),
    keepalive               INTEGER NOT NULL CHECK (keepalive IN (0, 1)),
    requests_per_connection INTEGER
                            CHECK (requests_per_connection IS NULL OR requests_per_connection >= 1),
    needs                   TEXT CHECK (needs IS NULL OR needs IN ('db', 'ws')),
    net_placement           TEXT NOT NULL CHECK (net_placement IN ('loopback', 'netns')),
    net_bandwidth_bps       INTEGER CHECK (net_bandwidth_bps IS NULL OR net_bandwidth_bps > 0),
    -- The first scenario of the suite measuring the same cells, placement aside.
    same_cells_as           TEXT NOT NULL,
    PRIMARY KEY (run_id, position),
    UNIQUE (run_id, name)
) STRICT;

ALTER TABLE servers ADD COLUMN language TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN language_version TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN toolchain TEXT;
ALTER TABLE servers ADD COLUMN framework TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN framework_version TEXT NOT NULL DEFAULT '';
-- No CHECK on the names: a model added later must not need a new table.
ALTER TABLE servers ADD COLUMN model TEXT;
ALTER TABLE servers ADD COLUMN tier TEXT NOT NULL DEFAULT 'default'
    CHECK (tier IN ('default', 'tuned'));
ALTER TABLE servers ADD COLUMN website TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN offers TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(offers) AND json_type(offers) = 'array');
"#,
    // 10: contract 1.2's parts (static, upload, json-comp) as a scenario's
    // `needs`. SQLite cannot change a CHECK in place, so the table is made
    // again without a CHECK on the part's name (as `servers.model` has
    // none): a part added later must not need a new table. The records
    // crate's `Offer::parse` is what refuses an unknown name on reading.
    r#"
CREATE TABLE scenarios_10 (
    run_id                  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position                INTEGER NOT NULL CHECK (position >= 0),
    name                    TEXT NOT NULL,
    kind                    TEXT NOT NULL,
    endpoint                TEXT NOT NULL,
    connections             TEXT NOT NULL
                            CHECK (json_valid(connections) AND json_type(connections) = 'array'),
    keepalive               INTEGER NOT NULL CHECK (keepalive IN (0, 1)),
    requests_per_connection INTEGER
                            CHECK (requests_per_connection IS NULL OR requests_per_connection >= 1),
    needs                   TEXT CHECK (needs IS NULL OR needs <> ''),
    net_placement           TEXT NOT NULL CHECK (net_placement IN ('loopback', 'netns')),
    net_bandwidth_bps       INTEGER CHECK (net_bandwidth_bps IS NULL OR net_bandwidth_bps > 0),
    same_cells_as           TEXT NOT NULL,
    PRIMARY KEY (run_id, position),
    UNIQUE (run_id, name)
) STRICT;
INSERT INTO scenarios_10 SELECT run_id, position, name, kind, endpoint, connections, keepalive,
    requests_per_connection, needs, net_placement, net_bandwidth_bps, same_cells_as
    FROM scenarios;
DROP TABLE scenarios;
ALTER TABLE scenarios_10 RENAME TO scenarios;
"#,
    // 11: what carries a scenario's requests (contract 1.5: HTTP/1.1, TLS,
    // HTTP/2 over TLS or cleartext, gRPC) and HTTP/2's streams per
    // connection. Every scenario stored before was HTTP/1.1 on cleartext.
    // No CHECK on the name, as for `needs`: `Protocol::parse` refuses an
    // unknown one on reading.
    r#"
ALTER TABLE scenarios ADD COLUMN protocol TEXT NOT NULL DEFAULT 'h1' CHECK (protocol <> '');
ALTER TABLE scenarios ADD COLUMN streams INTEGER NOT NULL DEFAULT 1 CHECK (streams >= 1);
"#,
    // 12: what happened to resident servers (a suite's `[warmup] process =
    // "run"`): started, idle between their cells (CPU and memory), crashed,
    // restarted. No CHECK on the event's name, as for `needs`:
    // `ServerEventKind::parse` refuses an unknown one on reading.
    r#"
CREATE TABLE server_events (
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL CHECK (seq >= 0),
    server      TEXT NOT NULL,
    variant     TEXT NOT NULL,
    round       INTEGER NOT NULL CHECK (round >= 0),
    at          TEXT NOT NULL,
    event       TEXT NOT NULL CHECK (event <> ''),
    waited_s    REAL CHECK (waited_s IS NULL OR waited_s >= 0),
    cpu_s       REAL CHECK (cpu_s IS NULL OR cpu_s >= 0),
    rss_bytes   INTEGER CHECK (rss_bytes IS NULL OR rss_bytes >= 0),
    detail      TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT;
"#,
    // 13: bytes of the server's output its log dropped during the cell
    // (issue 42: the log keeps the first and last MiB); NULL when nothing
    // was cut, and before.
    r#"
ALTER TABLE measurements ADD COLUMN server_output_cut INTEGER
    CHECK (server_output_cut IS NULL OR server_output_cut > 0);
"#,
];

/// The schema version whose step also fills its new records from the texts
/// runs stored before it.
const TYPED_RECORDS: u32 = 9;

/// The schema version this code reads and writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Why a file could not be brought to [`SCHEMA_VERSION`].
#[derive(Debug)]
pub(super) enum MigrateError {
    /// The file is at `found`, beyond what this code knows.
    Newer { found: u32 },
    /// Migration to `version` failed and was rolled back.
    Failed {
        version: u32,
        source: rusqlite::Error,
    },
}

pub(super) fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Brings the file to [`SCHEMA_VERSION`], one committed step per migration,
/// so a failure leaves it at the last version that fully applied.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), MigrateError> {
    let found = user_version(conn).map_err(|source| MigrateError::Failed { version: 1, source })?;
    if found > SCHEMA_VERSION {
        return Err(MigrateError::Newer { found });
    }
    for (index, script) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = index as u32 + 1;
        let failed = |source| MigrateError::Failed { version, source };
        // IMMEDIATE takes the write lock before reading the version, so two
        // netbench processes opening a new file at once cannot both apply a
        // step; the second one sees the first one's version and skips it.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed)?;
        let now = user_version(&tx).map_err(failed)?;
        if now > SCHEMA_VERSION {
            return Err(MigrateError::Newer { found: now });
        }
        if now >= version {
            continue;
        }
        tx.execute_batch(script).map_err(failed)?;
        if version == TYPED_RECORDS {
            super::typed::typed_records(&tx).map_err(failed)?;
        }
        tx.pragma_update(None, "user_version", version)
            .map_err(failed)?;
        tx.commit().map_err(failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_an_empty_database_to_the_current_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(user_version(&conn).unwrap(), 0);
        migrate(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            tables,
            [
                "measurements",
                "runs",
                "samples",
                "scenarios",
                "server_events",
                "servers"
            ]
        );
        // A second pass has nothing to do.
        migrate(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn refuses_a_newer_schema_and_leaves_it_alone() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        match migrate(&mut conn) {
            Err(MigrateError::Newer { found }) => assert_eq!(found, SCHEMA_VERSION + 1),
            other => panic!("expected Newer, got {other:?}"),
        }
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION + 1);
    }

    #[test]
    fn a_failing_step_is_rolled_back() {
        let mut conn = Connection::open_in_memory().unwrap();
        // Occupy a name the first migration creates, so it fails half-way.
        conn.execute_batch("CREATE TABLE samples (x)").unwrap();
        match migrate(&mut conn) {
            Err(MigrateError::Failed { version, .. }) => assert_eq!(version, 1),
            other => panic!("expected Failed, got {other:?}"),
        }
        assert_eq!(user_version(&conn).unwrap(), 0);
        let runs: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = 'runs'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(runs, 0, "what the failed step created is rolled back");
    }
}
