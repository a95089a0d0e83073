//! Tests of the results store, on in-memory and on-disk databases.

use super::*;
use netbench_records::fixtures::key;
use netbench_records::{Offer, Protocol};
use rusqlite::types::{FromSql, ValueRef};
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

/// A run to record things under, for the store's other tests.
pub(super) fn new_run_for_tests() -> NewRun {
    new_run("events")
}

fn new_run(suite: &str) -> NewRun {
    NewRun {
        suite: suite.into(),
        suite_toml: format!("name = \"{suite}\"\nrepetitions = 3\n"),
        command: format!("netbench run suites/{suite}.toml"),
        environment: json!({"cpu": "Test CPU", "cores": 2, "kernel": "6.1", "commit": "abc123"}),
        placement: json!({"server": [0], "client": [1]}),
        repetitions: None,
        work_seed: 7,
        adaptive: None,
        scenarios: Vec::new(),
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
        allocator: None,
        facts: ServerFacts::default(),
    }
}

fn sample(t_s: f64) -> Sample {
    Sample {
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

fn ok(key: CellKey, samples: usize) -> Measurement {
    Measurement {
        id: None,
        key,
        status: MeasurementStatus::Ok,
        failure: None,
        result_json: Some(r#"{"requests":1000,"rps":500.0}"#.into()),
        histogram: Some(vec![0x1c, 0x84, 0x93, 0x14, 0, 0xff]),
        client_bound: true,
        started_at: rfc3339(UNIX_EPOCH + Duration::from_millis(1_700_000_000_042)),
        duration_s: 2.0,
        samples: (0..samples).map(|i| sample(i as f64 / 10.0)).collect(),
        noise: Some(Noise {
            probe_server_ns: 812_345.5,
            probe_client_ns: 790_001.0,
            probe_loopback_ns: Some(41_250.25),
            probe_drift: -0.012,
            steal: 0.031,
            other_busy_cores: 0.12,
            other_busy_before_cores: 0.4,
            quiet_wait_s: 1.25,
        }),
        facts: Some(crate::kinds::Facts::ShortLived(
            crate::kinds::ShortLivedFacts {
                requests_per_connection: 10,
            },
        )),
        server_cpu_s: Some(1.5),
        network: Some(crate::netns::NetworkPath {
            placement: crate::netns::NetPlacement::Netns,
            server_addr: "10.213.0.2".parse().unwrap(),
            client_addr: "10.213.0.1".parse().unwrap(),
            mtu: 1500,
            bandwidth: crate::netns::parse_bandwidth("1gbit").ok(),
            burst_bytes: Some(125_000),
        }),
        warmup: Some(WarmUp {
            process: ProcessUse::Fresh,
            ready_s: Some(0.25),
            since_start_s: 0.3,
            window_s: 0.5,
            curve: vec![800.0, 4_000.0, 21_000.0, 21_500.0],
            settled_s: Some(2.0),
            capped: false,
            class: "warmed".to_string(),
            steady_from_s: Some(1.0),
        }),
        server_output_cut: Some(3_490_000_000),
    }
}

fn failed(key: CellKey, why: &str) -> Measurement {
    Measurement {
        id: None,
        key,
        status: MeasurementStatus::Failed,
        failure: Some(why.into()),
        result_json: None,
        histogram: None,
        client_bound: false,
        started_at: rfc3339(UNIX_EPOCH),
        duration_s: 0.5,
        samples: Vec::new(),
        noise: None,
        facts: None,
        server_cpu_s: None,
        network: None,
        warmup: None,
        server_output_cut: None,
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
    let mut run = new_run("standard");
    run.environment["tools"] = json!({"go": "go version go1.26.8 linux/amd64"});
    run.scenarios = crate::records_of::scenario_records(
        &crate::Suite::parse(
            "standard",
            "servers = [\"*\"]\n\
             [[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [1, 64]\n\
             [[scenarios]]\nname = \"veth\"\nendpoint = \"blank\"\nconnections = [8]\n\
             placement = \"netns\"\nbandwidth = \"100mbit\"\n\
             [[scenarios]]\nname = \"short\"\nendpoint = \"work\"\nconnections = [8]\n\
             kind = \"short-lived\"\nrequests_per_connection = 3\n\
             [[scenarios]]\nname = \"db\"\nendpoint = \"db\"\nconnections = [8]\n",
        )
        .unwrap(),
    );
    assert_eq!(run.scenarios.len(), 4);
    let id = store.begin_run(&run).unwrap();

    let mut a = server("a", "");
    a.manifest_toml = "name = \"a\"\nlanguage = \"Go\"\nmodel = \"green-threads\"\n\
                       tier = \"tuned\"\noffers = [\"db\", \"ws\"]\nrun = \"x\"\n"
        .into();
    a.facts = crate::records_of::server_facts(&a.manifest_toml, "");
    let mut a_mi = server("a", "mimalloc");
    a_mi.artefact_bytes = None;
    a_mi.ready_s = None;
    a_mi.verify_json = None;
    a_mi.allocator = Some("mimalloc".into());
    let mut b = server("b", "");
    b.build_status = BuildStatus::Failed;
    b.excluded_reason = Some("build failed (exit status 1); its last output:\nerror[E0425]".into());
    for s in [&b, &a_mi, &a] {
        store.record_server(id, s).unwrap();
    }

    let mut m2 = ok(key("a", "blank", 64, 1), 0);
    m2.key.variant = "mimalloc".into();
    m2.client_bound = false;
    m2.network = Some(crate::netns::loopback_path());
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
    assert_eq!(detail.scenarios, run.scenarios);
    // The toolchain came from the run's environment when the server was
    // recorded.
    assert_eq!(detail.servers[0].facts.toolchain.as_deref(), Some("1.26.8"));
    assert_eq!(
        detail.servers[0].facts.model,
        Some(crate::Model::GreenThreads)
    );
    assert_eq!(detail.servers[0].facts.tier, crate::Tier::Tuned);
    assert_eq!(detail.servers[0].facts.offers.len(), 2);
    a.facts.toolchain = Some("1.26.8".into());
    // Ordered by server, then variant ("" first).
    assert_eq!(detail.servers, [a, a_mi, b]);

    // Ordered by cell key: variant "" before "mimalloc", "blank" before "work".
    let order = [0, 2, 1];
    assert_eq!(detail.measurements.len(), 3);
    for (stored, &i) in detail.measurements.iter().zip(&order) {
        let r = &records[i];
        assert_eq!(stored.id, Some(ids[i]));
        assert_eq!(stored.key, r.key);
        assert_eq!(stored.status, r.status);
        assert_eq!(stored.failure, r.failure);
        assert_eq!(stored.result_json, r.result_json);
        assert_eq!(stored.histogram, r.histogram);
        assert_eq!(stored.client_bound, r.client_bound);
        assert_eq!(stored.started_at, r.started_at);
        assert_eq!(stored.duration_s, r.duration_s);
        assert_eq!(stored.samples, r.samples);
        assert_eq!(stored.noise, r.noise);
        assert_eq!(stored.network, r.network);
        assert_eq!(stored.warmup, r.warmup);
        assert_eq!(stored.server_output_cut, r.server_output_cut);
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

#[test]
fn reading_never_creates_or_migrates_a_store() {
    let dir = std::env::temp_dir().join(format!("netbench-ro-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let missing = dir.join("sub/none.sqlite");
    assert!(matches!(
        Store::open_existing(&missing),
        Err(StoreError::Missing { .. })
    ));
    assert!(!dir.exists(), "the folder was made");

    // A file at schema 1 is read through an upgraded copy and left as it is.
    std::fs::create_dir_all(&dir).unwrap();
    let old = dir.join("old.sqlite");
    let conn = rusqlite::Connection::open(&old).unwrap();
    conn.execute_batch(super::schema::MIGRATIONS[0]).unwrap();
    conn.execute_batch(
        "PRAGMA user_version = 1;
         INSERT INTO runs (suite, suite_toml, command, started_at, status, environment, placement)
         VALUES ('quick', 'repetitions = 5', 'netbench run quick', '2026-11-01T00:00:00Z',
                 'complete', '{\"work_seed\": 42}', '{}');",
    )
    .unwrap();
    drop(conn);
    let before = std::fs::read(&old).unwrap();
    let store = Store::open_existing(&old).unwrap();
    let run = store.run(1).unwrap();
    assert_eq!(run.work_seed, Some(42), "the seed moved to its column");
    assert_eq!(
        run.repetitions, None,
        "an old run's text says its repetitions"
    );
    drop(store);
    assert_eq!(std::fs::read(&old).unwrap(), before, "the file changed");

    // A current one opens and reads.
    let current = dir.join("current.sqlite");
    drop(Store::open(&current).unwrap());
    let store = Store::open_existing(&current).unwrap();
    assert!(store.runs().unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn opening_a_schema_1_store_to_write_moves_its_seed_to_the_new_column() {
    let dir = std::env::temp_dir().join(format!("netbench-mig-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("v1.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(super::schema::MIGRATIONS[0]).unwrap();
    conn.execute_batch(
        "PRAGMA user_version = 1;
         INSERT INTO runs (suite, suite_toml, command, started_at, status, environment, placement)
         VALUES ('quick', 'repetitions = 5', 'c', '2026-11-01T00:00:00Z', 'interrupted',
                 '{\"work_seed\": 1234567890123}', '{}'),
                ('old', 'repetitions = 1', 'c', '2026-11-01T00:00:00Z', 'complete', '{}', '{}');",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    assert_eq!(pragma::<u32>(&store, "user_version"), SCHEMA_VERSION);
    let first = store.run(1).unwrap();
    assert_eq!(first.work_seed, Some(1_234_567_890_123));
    assert_eq!(first.repetitions, None);
    assert_eq!(
        store.run(2).unwrap().work_seed,
        None,
        "no seed to carry over"
    );
    // New runs keep both facts in their columns, the seed's 64 bits intact.
    let mut run = new_run("quick");
    run.repetitions = Some(4);
    run.work_seed = u64::MAX - 1;
    let id = store.begin_run(&run).unwrap();
    let back = store.run(id).unwrap();
    assert_eq!(
        (back.repetitions, back.work_seed),
        (Some(4), Some(u64::MAX - 1))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn issue31_scenarios_needing_the_1_2_parts_are_stored_and_older_rows_kept() {
    use netbench_records::Offer;
    let dir = TempDir::new("parts");
    std::fs::create_dir_all(&dir.0).unwrap();
    // A file at schema 9 with a scenario that needs db: the step to 10
    // makes the table again and keeps the row.
    let path = dir.0.join("v9.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    for script in &super::schema::MIGRATIONS[..9] {
        conn.execute_batch(script).unwrap();
    }
    conn.execute_batch(
        "PRAGMA user_version = 9;
         INSERT INTO runs (suite, suite_toml, command, started_at, status, environment, placement)
         VALUES ('t', '', 'c', '2026-11-01T00:00:00Z', 'complete', '{}', '{}');
         INSERT INTO scenarios (run_id, position, name, kind, endpoint, connections, keepalive,
                                needs, net_placement, same_cells_as)
         VALUES (1, 0, 'db', 'throughput', 'db', '[1]', 1, 'db', 'loopback', 'db');",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.run(1).unwrap().scenarios[0].needs, Some(Offer::Db));

    let suite = crate::suite::Suite::parse(
        "apps",
        r#"
servers = ["a"]
[[scenarios]]
name = "s"
endpoint = "static"
connections = [1]
[[scenarios]]
name = "u"
endpoint = "upload"
connections = [1]
[[scenarios]]
name = "j"
endpoint = "json-comp"
connections = [1]
"#,
    )
    .unwrap();
    let run = store
        .begin_run(&NewRun {
            scenarios: crate::records_of::scenario_records(&suite),
            ..new_run("apps")
        })
        .expect("a run whose scenarios need the 1.2 parts is stored");
    let needs: Vec<_> = store
        .run(run)
        .unwrap()
        .scenarios
        .iter()
        .map(|s| s.needs)
        .collect();
    assert_eq!(
        needs,
        [
            Some(Offer::Static),
            Some(Offer::Upload),
            Some(Offer::JsonComp)
        ]
    );
}

#[test]
fn issue29_a_store_from_before_typed_records_gets_them_from_its_texts() {
    let dir = TempDir::new("typed");
    std::fs::create_dir_all(&dir.0).unwrap();
    let path = dir.0.join("v8.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    for script in &super::schema::MIGRATIONS[..8] {
        conn.execute_batch(script).unwrap();
    }
    conn.execute_batch(
        "PRAGMA user_version = 8;
         INSERT INTO runs (suite, suite_toml, command, started_at, status, environment, placement)
         VALUES ('t', 'servers = [\"*\"]
[[scenarios]]
name = \"blank\"
endpoint = \"blank\"
connections = [10, 100]
[[scenarios]]
name = \"idle\"
kind = \"idle\"
endpoint = \"blank\"
connections = [100, 1000]
', 'c', '2026-11-01T00:00:00Z', 'complete',
                 '{\"tools\": {\"rustc\": \"rustc 1.95.0 (x 2026-04-14)\"}}', '{}'),
                ('gone', 'a suite this netbench cannot read [', 'c', '2026-11-01T00:00:00Z',
                 'complete', '{}', '{}');
         INSERT INTO servers (run_id, server, variant, manifest_toml, build_status, build_s)
         VALUES (1, 'r', '', 'name = \"r\"
language = \"Rust\"
framework = \"hyper\"
model = \"work-stealing\"
run = \"x\"
', 'ok', 1.0),
                (2, 'old', '', 'name = \"old\"
language = \"Go\"
run = \"x\"
', 'ok', 1.0);",
    )
    .unwrap();
    drop(conn);
    // A reader sees the records through its upgraded copy; the file stays
    // at 8.
    let read = Store::open_existing(&path).unwrap();
    let run = read.run(1).unwrap();
    assert_eq!(
        run.scenarios
            .iter()
            .map(|s| (s.name.as_str(), s.kind.as_str()))
            .collect::<Vec<_>>(),
        [("blank", "throughput"), ("idle", "idle")]
    );
    assert_eq!(run.scenarios[1].connections, [100, 1000]);
    let r = &run.servers[0].facts;
    assert_eq!(
        (r.language.as_str(), r.framework.as_str()),
        ("Rust", "hyper")
    );
    assert_eq!(r.model, Some(crate::Model::WorkStealing));
    assert_eq!(r.toolchain.as_deref(), Some("1.95.0"));
    // A suite file that no longer parses gives no scenarios, not an error;
    // its server's manifest still gives what it has.
    let gone = read.run(2).unwrap();
    assert!(gone.scenarios.is_empty());
    assert_eq!(
        (
            gone.servers[0].facts.language.as_str(),
            gone.servers[0].facts.model
        ),
        ("Go", None)
    );
    drop(read);
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(super::schema::user_version(&conn).unwrap(), 8);
    drop(conn);
    // A writer migrates the file itself, with the same records.
    let store = Store::open(&path).unwrap();
    assert_eq!(pragma::<u32>(&store, "user_version"), SCHEMA_VERSION);
    assert_eq!(store.run(1).unwrap().scenarios, run.scenarios);
}

/// The files in `dir`, by name, with their bytes and modification times.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>, SystemTime)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let meta = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
                meta.modified().unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// Issue 27 item 8: `run --db` on another program's SQLite file added
/// netbench's tables, set user_version to 7 and switched it to WAL.
#[test]
fn issue27_a_foreign_sqlite_file_is_refused_untouched() {
    let dir = TempDir::new("foreign");
    std::fs::create_dir_all(&dir.0).unwrap();
    let path = dir.0.join("app.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE \"users\x1b[31m\" (id INTEGER); INSERT INTO \"users\x1b[31m\" VALUES (1);",
    )
    .unwrap();
    drop(conn);
    let before = snapshot(&dir.0);
    for opened in [Store::open(&path), Store::open_existing(&path)] {
        let Err(e) = opened else {
            panic!("a foreign file was opened as a store")
        };
        assert!(matches!(e, StoreError::Foreign { .. }), "{e}");
        let said = e.to_string();
        assert!(
            said.contains("another program") && said.contains("--db"),
            "{said}"
        );
        assert!(!said.contains('\x1b'), "{said:?}");
    }
    assert_eq!(snapshot(&dir.0), before, "the foreign file changed");
    // An empty file and a netbench store are still welcome.
    let empty = dir.0.join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    drop(Store::open(&empty).unwrap());
    drop(Store::open(&empty).unwrap());
}

/// Issue 27 item 9: a reader of a WAL store made -wal and -shm files beside
/// it (and failed where it could not). Nothing is written now: the check
/// holds as root, who may write anything, too.
#[test]
fn issue27_reading_a_store_writes_nothing_beside_it() {
    let dir = TempDir::new("reader");
    let path = dir.0.join("db.sqlite");
    let store = Store::open(&path).unwrap();
    let run = store.begin_run(&new_run("quick")).unwrap();
    store.set_run_status(run, RunStatus::Complete).unwrap();
    drop(store);
    let before = snapshot(&dir.0);
    assert_eq!(
        before.len(),
        1,
        "a closed store is one file: {:?}",
        before.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    std::thread::sleep(Duration::from_millis(20));
    let store = Store::open_existing(&path).unwrap();
    assert_eq!(store.runs().unwrap().len(), 1);
    assert_eq!(store.run(run).unwrap().status, RunStatus::Complete);
    drop(store);
    assert_eq!(snapshot(&dir.0), before, "reading wrote beside the store");
}

/// Issue 27 item 9: a store with a WAL a writer still holds, read by
/// someone who cannot write its folder, is read through a private copy:
/// the writer's latest commit is seen, and nothing new appears.
#[test]
fn issue27_a_live_wal_is_read_without_writing_the_folder() {
    let dir = TempDir::new("live-wal");
    let path = dir.0.join("db.sqlite");
    let writer = Store::open(&path).unwrap();
    writer
        .conn
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    let run = writer.begin_run(&new_run("live")).unwrap();
    let before = snapshot(&dir.0);
    assert!(before.iter().any(|f| f.0.ends_with("-wal")));
    let conn = open::open_reader_as(&path, Duration::from_secs(1), false).unwrap();
    let reader = Store::with(conn, path.clone());
    assert_eq!(reader.run(run).unwrap().suite, "live");
    drop(reader);
    let names =
        |s: &[(String, Vec<u8>, SystemTime)]| s.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&snapshot(&dir.0)), names(&before));
    drop(writer);
}

/// Issue 26 item 4: a run whose netbench died stayed `running` forever.
/// While its writer holds it, readers see it running; once the writer is
/// gone without finishing it (dropped here; SIGKILL in the binary's tests),
/// it reads as interrupted, and a resume holds it again.
#[test]
fn issue26_a_run_nobody_holds_reads_as_interrupted() {
    let dir = TempDir::new("held");
    let path = dir.0.join("db.sqlite");
    let writer = Store::open(&path).unwrap();
    let run = writer.begin_run(&new_run("quick")).unwrap();
    let reader = Store::open_existing(&path).unwrap();
    assert_eq!(reader.run(run).unwrap().status, RunStatus::Running);
    assert_eq!(reader.runs().unwrap()[0].status, RunStatus::Running);
    drop(writer);
    assert_eq!(reader.run(run).unwrap().status, RunStatus::Interrupted);
    assert_eq!(reader.runs().unwrap()[0].status, RunStatus::Interrupted);
    // A file left by a dead writer (the kill test's case) changes nothing.
    std::fs::write(dir.0.join("db.sqlite.running-1-0"), format!("{run}\n")).unwrap();
    assert_eq!(reader.run(run).unwrap().status, RunStatus::Interrupted);
    let resumer = Store::open(&path).unwrap();
    resumer.set_run_status(run, RunStatus::Running).unwrap();
    assert!(
        !dir.0.join("db.sqlite.running-1-0").exists(),
        "the next writer removes stale files"
    );
    assert_eq!(reader.run(run).unwrap().status, RunStatus::Running);
    resumer.set_run_status(run, RunStatus::Complete).unwrap();
    assert_eq!(reader.run(run).unwrap().status, RunStatus::Complete);
    let left: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".running-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn issue32_a_scenarios_protocol_and_streams_are_stored_and_older_rows_read_as_http1() {
    let dir = TempDir::new("protocols");
    std::fs::create_dir_all(&dir.0).unwrap();
    let path = dir.0.join("v10.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    for script in &super::schema::MIGRATIONS[..10] {
        conn.execute_batch(script).unwrap();
    }
    conn.execute_batch(
        "PRAGMA user_version = 10;
         INSERT INTO runs (suite, suite_toml, command, started_at, status, environment, placement)
         VALUES ('t', '', 'c', '2026-11-01T00:00:00Z', 'complete', '{}', '{}');
         INSERT INTO scenarios (run_id, position, name, kind, endpoint, connections, keepalive,
                                net_placement, same_cells_as)
         VALUES (1, 0, 'blank', 'throughput', 'blank', '[1]', 1, 'loopback', 'blank');",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let old = &store.run(1).unwrap().scenarios[0];
    assert_eq!((old.protocol, old.streams), (Protocol::H1, 1));

    let suite = crate::suite::Suite::parse(
        "protocols",
        r#"
servers = ["a"]
[[scenarios]]
name = "h1"
endpoint = "blank"
connections = [1]
[[scenarios]]
name = "h2"
endpoint = "blank"
protocol = "h2"
streams = 10
connections = [1]
[[scenarios]]
name = "grpc"
endpoint = "work"
protocol = "grpc"
connections = [1]
"#,
    )
    .unwrap();
    let run = store
        .begin_run(&NewRun {
            scenarios: crate::records_of::scenario_records(&suite),
            ..new_run("protocols")
        })
        .unwrap();
    let got: Vec<_> = store
        .run(run)
        .unwrap()
        .scenarios
        .iter()
        .map(|s| (s.protocol, s.streams, s.needs))
        .collect();
    assert_eq!(
        got,
        [
            (Protocol::H1, 1, None),
            (Protocol::H2, 10, Some(Offer::H2)),
            (Protocol::Grpc, 1, Some(Offer::Grpc)),
        ]
    );
}

/// Issue 42 (low): `run --db` added a run to a store `runs` called
/// malformed, and `show`, `report` and `compare` read it without a word. A
/// damaged store is refused for writing, and a reader is told.
#[test]
fn issue42_a_damaged_store_is_refused_for_writing_and_said_so_when_read() {
    let dir = TempDir::new("damaged");
    std::fs::create_dir_all(&dir.0).unwrap();
    let path = dir.0.join("db.sqlite");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.damage(), None);
    drop(store);
    let healthy = Store::open_existing(&path).unwrap();
    assert_eq!(healthy.damage(), None);
    drop(healthy);
    // The last page (a table's or an index's, never the first, which holds
    // the schema) overwritten with garbage.
    let mut bytes = std::fs::read(&path).unwrap();
    let page = 4096;
    assert!(bytes.len() >= 4 * page, "{} bytes", bytes.len());
    let last = bytes.len() - page;
    bytes[last..].fill(0xa5);
    std::fs::write(&path, &bytes).unwrap();
    let err = match Store::open(&path) {
        Ok(_) => panic!("a damaged store was opened for writing"),
        Err(e) => e,
    };
    assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
    assert!(err.to_string().contains("restore it from a copy"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file changed");
    let read = Store::open_existing(&path).unwrap();
    assert!(read.damage().is_some());
}
