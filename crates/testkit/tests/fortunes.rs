//! The contract's fortunes part end to end on a real PostgreSQL: verify
//! passes the reference server and fails each flawed one on the check meant
//! for it, puts the table back, and the load engine checks every page,
//! counting an unescaped one as a body error.

use std::time::Duration;

use netbench_contract::fortunes::{fortunes_request, FORTUNES, SELECT_FORTUNES};
use netbench_contract::{verify, CheckStatus, Client, VerifyOptions, VerifyReport};
use netbench_engine::{parse_url, run, ErrorKind, LoadPlan, Pacing, RunControl, Stop};
use netbench_suite::postgres::PrivatePostgres;
use netbench_testkit::{serve_contract_db, Flaw, TestServer};

fn check(server: &TestServer, url: &str) -> VerifyReport {
    let mut opts = VerifyOptions::new(Client::new(server.addr, Duration::from_secs(5)), 9);
    opts.database_url = Some(url.to_string());
    opts.fortunes = true;
    verify(&opts)
}

fn status(r: &VerifyReport, name: &str) -> CheckStatus {
    r.get(name)
        .unwrap_or_else(|| panic!("no {name} check in {:?}", r.checks))
        .status
}

fn table(url: &str) -> Vec<(i32, String)> {
    let mut pg = postgres::Client::connect(url, postgres::NoTls).unwrap();
    pg.query(&format!("{SELECT_FORTUNES} ORDER BY id"), &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

fn plan(server: &TestServer) -> LoadPlan {
    let url = parse_url(&server.url("/")).unwrap();
    LoadPlan {
        sources: Vec::new(),
        io: Default::default(),
        addr: server.addr,
        connections: 4,
        workers: 1,
        stop: Stop::Count(200),
        pacing: Pacing::Closed,
        warmup: Duration::ZERO,
        timeout: Duration::from_secs(5),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        requests: vec![fortunes_request(&url, true)],
        ws: None,
        tls: None,
        session: None,
        h2: false,
    }
}

#[test]
fn verify_and_load_judge_the_page_and_each_flaw_fails_its_check() {
    let pg = PrivatePostgres::start(None).expect("PostgreSQL starts (make test installs it)");
    let url = pg.url();
    let seeded: Vec<(i32, String)> = FORTUNES.iter().map(|(i, m)| (*i, m.to_string())).collect();
    assert_eq!(table(&url), seeded);

    let honest = serve_contract_db(Flaw::None, Some(url.clone()));
    let r = check(&honest, &url);
    for name in ["fortunes-page", "fortunes-escaped", "fortunes-follows"] {
        assert_eq!(
            status(&r, name),
            CheckStatus::Pass,
            "{name}: {:?}",
            r.get(name)
        );
    }
    assert!(r.ok(), "{:?}", r.checks);

    for (flaw, fails, says) in [
        (Flaw::FortunesUnescaped, "fortunes-escaped", "raw <script>"),
        (Flaw::FortunesUnsorted, "fortunes-page", "data row 1"),
        (
            Flaw::FortunesCached,
            "fortunes-follows",
            "a page from a cache?",
        ),
    ] {
        let server = serve_contract_db(flaw, Some(url.clone()));
        let r = check(&server, &url);
        let c = r.get(fails).unwrap();
        assert_eq!(c.status, CheckStatus::Fail, "{flaw:?}: {c:?}");
        assert!(c.reason.contains(says), "{flaw:?}: {}", c.reason);
    }
    // An unsorted page is still escaped, and a cached one right at first.
    let r = check(
        &serve_contract_db(Flaw::FortunesUnsorted, Some(url.clone())),
        &url,
    );
    assert_eq!(status(&r, "fortunes-escaped"), CheckStatus::Pass);
    let r = check(
        &serve_contract_db(Flaw::FortunesCached, Some(url.clone())),
        &url,
    );
    assert_eq!(status(&r, "fortunes-page"), CheckStatus::Pass);
    // verify took out every row it added.
    assert_eq!(table(&url), seeded);

    // Under load every page is checked: the honest server's all pass, the
    // unescaped server's each count as a body error.
    let load = |s: &TestServer| {
        let p = plan(s);
        run(&p, &RunControl::new(&p)).unwrap()
    };
    let good = load(&honest);
    assert_eq!(
        (good.requests, good.errors.total()),
        (200, 0),
        "{:?}",
        good.errors
    );
    let bad = load(&serve_contract_db(
        Flaw::FortunesUnescaped,
        Some(url.clone()),
    ));
    assert_eq!(bad.errors.get(ErrorKind::Body), 200, "{:?}", bad.errors);

    // Without a database the checks cannot run, and the report says why.
    let mut opts = VerifyOptions::new(Client::new(honest.addr, Duration::from_secs(5)), 9);
    opts.fortunes = true;
    let r = verify(&opts);
    assert!(r.get("fortunes-page").is_none());
    assert!(
        r.skipped
            .iter()
            .any(|s| s.starts_with("fortunes: no database")),
        "{:?}",
        r.skipped
    );
}
