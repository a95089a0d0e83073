//! The contract's db part end to end on a real PostgreSQL (the runner's
//! private one): it starts seeded and goes without a trace; verify passes an
//! honest server and catches one that caches rows; the load engine checks
//! every row; a run with db (and ws) scenarios starts its database, hands
//! it to the servers that offer db and leaves the others out of those cells.

mod common;

use std::collections::HashSet;

use common::{fake_server, fake_server_with, request, scratch, Quiet};

use netbench_contract::db::{db_requests, random_ids, Row, ROWS, SELECT_ROWS};
use netbench_contract::{verify, CheckStatus, Client, VerifyOptions, VerifyReport};
use netbench_engine::{parse_url, run, ErrorKind, LoadPlan, Pacing, RunControl, Stop};
use netbench_suite::postgres::PrivatePostgres;
use netbench_suite::run_suite;
use netbench_suite::store::{MeasurementStatus, RunStatus, Store};
use netbench_testkit::{serve_contract_db, Flaw, TestServer};

fn table(url: &str) -> Vec<Row> {
    let mut pg = postgres::Client::connect(url, postgres::NoTls).unwrap();
    pg.query(&format!("{SELECT_ROWS} ORDER BY id"), &[])
        .unwrap()
        .iter()
        .map(Row::from_sql)
        .collect()
}

/// The tests here each start a PostgreSQL and look for the folders it
/// leaves: one at a time, so no test sees another's folder.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn check_db(server: &TestServer, url: Option<&str>) -> VerifyReport {
    let mut opts = VerifyOptions::new(
        Client::new(server.addr, std::time::Duration::from_secs(5)),
        7,
    );
    opts.database_url = url.map(str::to_string);
    verify(&opts)
}

fn status(r: &VerifyReport, name: &str) -> CheckStatus {
    r.get(name)
        .unwrap_or_else(|| panic!("no {name} check in {:?}", r.checks))
        .status
}

#[test]
fn the_private_database_holds_the_contract_table_and_leaves_no_trace() {
    let _one = one_at_a_time();
    let pg = PrivatePostgres::start(None).expect("PostgreSQL starts (make test installs it)");
    let pid = pg.pid();
    assert!(!pg.facts.version.is_empty());
    let rows = table(&pg.url());
    assert_eq!(rows.len(), ROWS as usize);
    // Every row is the formula the contract crate (and CONTRACT.md) states.
    for row in &rows {
        assert_eq!(row, &Row::seeded(row.id));
    }
    let dirs_before = pg_dirs();
    assert!(!dirs_before.is_empty());
    drop(pg);
    assert!(!alive(pid), "the postmaster is gone");
    assert!(pg_dirs().is_disjoint(&dirs_before), "its folder is removed");
}

/// The private databases' folders of this process.
fn pg_dirs() -> HashSet<String> {
    let mine = format!("netbench-pg-{}-", std::process::id());
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(&mine))
        .collect()
}

#[test]
fn verify_passes_a_server_that_reads_and_catches_one_that_caches() {
    let _one = one_at_a_time();
    let pg = PrivatePostgres::start(None).unwrap();
    let url = pg.url();

    let honest = serve_contract_db(Flaw::None, Some(url.clone()));
    let r = check_db(&honest, Some(&url));
    for name in ["db-row", "db-list", "db-follows", "db-errors"] {
        assert_eq!(
            status(&r, name),
            CheckStatus::Pass,
            "{name}: {:?}",
            r.get(name)
        );
    }
    assert!(r.ok(), "{:?}", r.checks);
    assert!(
        !r.skipped.iter().any(|s| s.starts_with("db")),
        "{:?}",
        r.skipped
    );

    let cached = serve_contract_db(Flaw::CachedDb, Some(url.clone()));
    let r = check_db(&cached, Some(&url));
    assert_eq!(status(&r, "db-follows"), CheckStatus::Fail);
    assert!(
        r.get("db-follows").unwrap().reason.contains("changed"),
        "{:?}",
        r.get("db-follows")
    );
    // A cache answers a first read correctly: only the changed row shows it.
    assert_eq!(status(&r, "db-row"), CheckStatus::Pass);
    assert!(!r.ok());

    // verify put every row it changed back.
    let rows = table(&url);
    assert!(rows.iter().all(|row| row == &Row::seeded(row.id)));

    // Without a database the db checks do not run, and the report says so.
    let r = check_db(&honest, None);
    assert!(r.get("db-row").is_none());
    assert!(
        r.skipped.iter().any(|s| s.starts_with("db:")),
        "{:?}",
        r.skipped
    );
}

#[test]
fn the_reference_server_answers_every_fixture() {
    let _one = one_at_a_time();
    let pg = PrivatePostgres::start(None).unwrap();
    let server = serve_contract_db(Flaw::None, Some(pg.url()));
    let client = Client::new(server.addr, std::time::Duration::from_secs(5));
    let fixtures = include_str!("../../../contract/fixtures/db.jsonl");
    for line in fixtures.lines() {
        let f: serde_json::Value = serde_json::from_str(line).unwrap();
        let r = client
            .request("GET", f["path"].as_str().unwrap(), None)
            .unwrap();
        assert_eq!(u64::from(r.status), f["status"], "{}", f["name"]);
        if r.status == 200 {
            let got: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
            assert_eq!(got, f["answer"], "{}", f["name"]);
        }
    }
}

fn db_plan(server: &TestServer, ids: &[i32]) -> LoadPlan {
    let url = parse_url(&server.url("/")).unwrap();
    LoadPlan {
        sources: Vec::new(),
        io: Default::default(),
        addr: server.addr,
        connections: 4,
        workers: 1,
        stop: Stop::Count(400),
        pacing: Pacing::Closed,
        warmup: std::time::Duration::ZERO,
        timeout: std::time::Duration::from_secs(5),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        requests: db_requests(&url, true, ids),
        ws: None,
        tls: None,
        session: None,
        h2: false,
    }
}

#[test]
fn load_checks_every_row_against_the_table() {
    let pg = PrivatePostgres::start(None).unwrap();
    let server = serve_contract_db(Flaw::None, Some(pg.url()));
    let ids = random_ids(11, 40, ROWS);
    let _one = one_at_a_time();
    let load = |plan: LoadPlan| run(&plan, &RunControl::new(&plan)).unwrap();
    let good = load(db_plan(&server, &ids));
    assert_eq!(good.requests, 400);
    assert_eq!(good.errors.total(), 0, "{:?}", good.errors);

    // One row of the pool changed behind the client's back: its answers no
    // longer match, and each is counted as a body error.
    let mut changed = Row::seeded(ids[0]);
    changed.quantity += 1;
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .unwrap()
        .batch_execute(&changed.update_sql())
        .unwrap();
    let bad = load(db_plan(&server, &ids));
    // Requests go round-robin over the pool, 400 over 40 ids: ten each.
    let share = ids.iter().filter(|&&i| i == ids[0]).count() as u64;
    assert_eq!(
        bad.errors.get(ErrorKind::Body),
        10 * share,
        "{:?}",
        bad.errors
    );
    assert_eq!(bad.errors.total(), 10 * share);
}

const SUITE: &str = r#"
servers = ["reads", "plain"]
repetitions = 1
cooldown = "0s"
quiet_wait = "0s"

[[scenarios]]
name = "blank"
endpoint = "blank"
connections = [2]
duration = "300ms"

[[scenarios]]
name = "db"
endpoint = "db"
connections = [2]
duration = "300ms"

[[scenarios]]
name = "db-list"
endpoint = "db-list"
connections = [2]
duration = "300ms"

[[scenarios]]
name = "ws"
endpoint = "ws"
connections = [2]
duration = "300ms"

[[scenarios]]
name = "ws-storm"
kind = "storm"
endpoint = "ws"
connections = [50]

[[scenarios]]
name = "ws-idle"
kind = "idle"
endpoint = "ws"
connections = [10, 30]
hold = "500ms"
"#;

#[test]
fn a_run_with_db_scenarios_brings_its_own_database() {
    let _one = one_at_a_time();
    let work = scratch("db-suite");
    let dir = work.join("servers");
    fake_server_with(&dir, "reads", "true", "offers = [\"db\", \"ws\"]\n", "", "");
    fake_server(&dir, "plain", "true", "");
    let req = request(SUITE, dir, &work);
    let mut store = Store::open(&work.join("db.sqlite")).unwrap();
    let before = pg_dirs();
    let outcome = run_suite(
        &req,
        &mut store,
        &mut Quiet {
            cancel_after: None,
            finished: 0,
        },
    )
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    let run = store.run(outcome.run).unwrap();
    let cells: Vec<(String, String)> = run
        .measurements
        .iter()
        .map(|m| {
            assert_eq!(m.status, MeasurementStatus::Ok, "{:?}", m.failure);
            (m.key.server.clone(), m.key.scenario.clone())
        })
        .collect();
    // blank for both; db, db-list and the ws scenarios only for the server
    // that offers them (one idle cell holds both its levels).
    assert_eq!(cells.len(), 7, "{cells:?}");
    assert!(cells.iter().all(|(s, sc)| sc == "blank" || s == "reads"));
    let ws = run
        .measurements
        .iter()
        .find(|m| m.key.scenario == "ws")
        .unwrap();
    let ws: netbench_engine::LoadResult =
        serde_json::from_str(ws.result_json.as_deref().unwrap()).unwrap();
    assert!(ws.requests > 0 && ws.errors.total() == 0, "{:?}", ws.errors);
    let storm = run
        .measurements
        .iter()
        .find(|m| m.key.scenario == "ws-storm")
        .unwrap();
    let Some(netbench_suite::kinds::Facts::Storm(f)) = &storm.facts else {
        panic!("storm facts: {:?}", storm.facts)
    };
    // Every client upgraded and had its one message echoed.
    assert_eq!((f.clients, f.answered), (50, 50), "{f:?}");
    let idle = run
        .measurements
        .iter()
        .find(|m| m.key.scenario == "ws-idle")
        .unwrap();
    let Some(netbench_suite::kinds::Facts::Idle(f)) = &idle.facts else {
        panic!("idle facts: {:?}", idle.facts)
    };
    // Every WebSocket connection of both levels upgraded, had its message
    // echoed and was held.
    let levels: Vec<(u32, u32, u32, u32)> = f
        .levels
        .iter()
        .map(|l| (l.connections, l.open, l.failed, l.closed_by_server))
        .collect();
    assert_eq!(levels, [(10, 10, 0, 0), (30, 30, 0, 0)], "{f:?}");
    // The reading server passed the db checks in its verify.
    let reads = run.servers.iter().find(|s| s.server == "reads").unwrap();
    let verify = reads.verify_json.as_deref().unwrap();
    assert!(verify.contains("\"db-follows\""), "{verify}");
    assert!(verify.contains("\"ws-echo\""), "{verify}");
    assert!(run.environment["postgresql"]["version"].is_string());
    // The database went with the run.
    assert!(pg_dirs().is_subset(&before));
}
