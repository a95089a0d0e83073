//! The contract's queries and updates parts end to end on a real
//! PostgreSQL: verify passes the reference server and fails each flawed one
//! on the check meant for it and leaves the World table as seeded; the load
//! engine checks every row of every answer.

use std::time::Duration;

use netbench_contract::world::{queries_request, updates_request, world_seed, RESEED_SQL};
use netbench_contract::{verify, CheckStatus, Client, VerifyOptions, VerifyReport};
use netbench_engine::{parse_url, run, ErrorKind, LoadPlan, Pacing, RunControl, Stop};
use netbench_suite::postgres::PrivatePostgres;
use netbench_testkit::{serve_contract_db, Flaw, TestServer};

fn check(server: &TestServer, url: &str) -> VerifyReport {
    let mut opts = VerifyOptions::new(Client::new(server.addr, Duration::from_secs(5)), 5);
    opts.database_url = Some(url.to_string());
    opts.queries = true;
    opts.updates = true;
    verify(&opts)
}

/// Rows whose number is not the seeded one.
fn changed_rows(url: &str) -> i64 {
    let mut pg = postgres::Client::connect(url, postgres::NoTls).unwrap();
    pg.query("SELECT id, randomnumber FROM world", &[])
        .unwrap()
        .iter()
        .filter(|r| {
            let (id, n): (i32, i32) = (r.get(0), r.get(1));
            i64::from(n) != world_seed(i64::from(id))
        })
        .count() as i64
}

fn plan(server: &TestServer, update: bool) -> LoadPlan {
    let url = parse_url(&server.url("/")).unwrap();
    let request = if update {
        updates_request(&url, true)
    } else {
        queries_request(&url, true)
    };
    LoadPlan {
        sources: Vec::new(),
        io: Default::default(),
        addr: server.addr,
        connections: 4,
        workers: 1,
        stop: Stop::Count(100),
        pacing: Pacing::Closed,
        warmup: Duration::ZERO,
        timeout: Duration::from_secs(5),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        requests: vec![request],
        ws: None,
        tls: None,
        session: None,
        h2: false,
    }
}

#[test]
fn verify_and_load_judge_world_rows_and_each_flaw_fails_its_check() {
    let pg = PrivatePostgres::start(None).expect("PostgreSQL starts (make test installs it)");
    let url = pg.url();
    assert_eq!(changed_rows(&url), 0, "seeded by the formula");

    let honest = serve_contract_db(Flaw::None, Some(url.clone()));
    let r = check(&honest, &url);
    let names = [
        "queries-rows",
        "queries-clamp",
        "queries-follows",
        "updates-rows",
        "updates-written",
    ];
    for name in names {
        let c = r
            .get(name)
            .unwrap_or_else(|| panic!("no {name}: {:?}", r.checks));
        assert_eq!(c.status, CheckStatus::Pass, "{name}: {c:?}");
    }
    assert!(r.ok(), "{:?}", r.checks);
    assert_eq!(changed_rows(&url), 0, "verify put the table back");

    for (flaw, fails, says) in [
        (Flaw::QueriesFabricated, "queries-rows", "the table holds"),
        (Flaw::QueriesUnclamped, "queries-clamp", "0 rows, want 1"),
        (Flaw::QueriesUnclamped, "updates-rows", "0 rows, want 1"),
        (Flaw::QueriesCached, "queries-follows", "rows from a cache?"),
        (Flaw::UpdatesUnwritten, "updates-written", "was not written"),
    ] {
        let server = serve_contract_db(flaw, Some(url.clone()));
        let r = check(&server, &url);
        let c = r.get(fails).unwrap();
        assert_eq!(c.status, CheckStatus::Fail, "{flaw:?}: {c:?}");
        assert!(c.reason.contains(says), "{flaw:?}: {}", c.reason);
    }
    assert_eq!(changed_rows(&url), 0);

    // Under load: every queries row is checked against the seeded table;
    // updates rows for shape, while the table changes.
    let load = |p: LoadPlan| run(&p, &RunControl::new(&p)).unwrap();
    let good = load(plan(&honest, false));
    assert_eq!(
        (good.requests, good.errors.total()),
        (100, 0),
        "{:?}",
        good.errors
    );
    let made_up = load(plan(
        &serve_contract_db(Flaw::QueriesFabricated, Some(url.clone())),
        false,
    ));
    assert_eq!(
        made_up.errors.get(ErrorKind::Body),
        100,
        "{:?}",
        made_up.errors
    );
    let updated = load(plan(&honest, true));
    assert_eq!(
        (updated.requests, updated.errors.total()),
        (100, 0),
        "{:?}",
        updated.errors
    );
    assert!(changed_rows(&url) > 1_000, "2,000 rows were updated");
    // What the runner does after an updates cell.
    postgres::Client::connect(&url, postgres::NoTls)
        .unwrap()
        .batch_execute(RESEED_SQL)
        .unwrap();
    assert_eq!(changed_rows(&url), 0);
}
