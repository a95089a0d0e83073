//! The contract's `app` end to end (issue 31): `verify`'s app checks against
//! the contract server, right and with one flaw each (every check fails by
//! some flaw, and a flaw leaves the checks it has nothing to do with
//! passing), and the engine's browsers under load: every page checked, a
//! flawed server's pages counted under their kind. Counts and reasons only,
//! never speed.

use std::time::Duration;

use netbench_contract::app::{app_load, PAGES_PER_SESSION};
use netbench_contract::{verify, CheckStatus, Client, VerifyOptions, VerifyReport};
use netbench_engine::{parse_url, run, ErrorKind, LoadPlan, LoadResult, Pacing, RunControl, Stop};
use netbench_testkit::{serve_contract, Flaw, TestServer};

const APP: [&str; 7] = [
    "app-session",
    "app-page",
    "app-gzip",
    "app-ids",
    "app-lock",
    "app-logout",
    "app-errors",
];

fn verify_app(flaw: Flaw) -> VerifyReport {
    let server = serve_contract(flaw);
    let mut opts = VerifyOptions::new(Client::new(server.addr, Duration::from_secs(5)), 0xa99);
    opts.documents = 2;
    opts.app = true;
    verify(&opts)
}

fn check<'a>(report: &'a VerifyReport, name: &str) -> &'a netbench_contract::Check {
    report
        .get(name)
        .unwrap_or_else(|| panic!("{name} was not run: {:?}", report.checks))
}

#[test]
fn a_correct_server_passes_every_app_check() {
    let report = verify_app(Flaw::None);
    for name in APP {
        let c = check(&report, name);
        assert_eq!(c.status, CheckStatus::Pass, "{name}: {}", c.reason);
    }
    assert!(report.ok(), "{:?}", report.checks);
    assert!(report.skipped.iter().all(|s| !s.starts_with("app")));
}

#[test]
fn without_asking_the_app_checks_are_skipped_and_said_so() {
    let server = serve_contract(Flaw::None);
    let report = verify(&VerifyOptions::new(
        Client::new(server.addr, Duration::from_secs(5)),
        1,
    ));
    assert!(report.checks.iter().all(|c| !c.name.starts_with("app")));
    assert!(report
        .skipped
        .iter()
        .any(|s| s.starts_with("app: not asked for")));
}

#[test]
fn each_flaw_fails_the_check_that_names_it() {
    // (flaw, the check it fails, a part of the reason, checks it leaves be)
    let cases: [(Flaw, &str, &str, &[&str]); 11] = [
        (
            Flaw::AppGlobalCounter,
            "app-session",
            "shows visits",
            &["app-errors"],
        ),
        (
            Flaw::AppNoCookie,
            "app-session",
            "no Set-Cookie",
            &["app-errors"],
        ),
        (
            Flaw::AppCookieState,
            "app-session",
            "another cookie",
            &["app-errors"],
        ),
        (Flaw::AppCookieState, "app-lock", "not locked", &[]),
        (
            Flaw::AppNoLock,
            "app-lock",
            "not locked",
            &["app-session", "app-page", "app-ids", "app-logout"],
        ),
        (
            Flaw::AppUnescaped,
            "app-page",
            "must be escaped",
            &["app-errors"],
        ),
        (Flaw::AppNoFiles, "app-page", "app.js", &["app-errors"]),
        (
            Flaw::GzipClaimPlain,
            "app-gzip",
            "not valid gzip",
            &["app-session", "app-page"],
        ),
        (
            Flaw::AppAdoptsCookie,
            "app-ids",
            "made-up cookie",
            &["app-session", "app-page", "app-lock"],
        ),
        (
            Flaw::AppLogoutIgnored,
            "app-logout",
            "must be gone",
            &["app-session", "app-ids"],
        ),
        (
            Flaw::AppLax400,
            "app-errors",
            "want 400",
            &["app-session", "app-page", "app-lock"],
        ),
    ];
    for (flaw, name, reason, unharmed) in cases {
        let report = verify_app(flaw);
        let c = check(&report, name);
        assert_eq!(
            c.status,
            CheckStatus::Fail,
            "{flaw:?} should fail {name}: {}",
            c.reason
        );
        assert!(
            c.reason.contains(reason),
            "{flaw:?}, {name}: `{}` lacks `{reason}`",
            c.reason
        );
        for other in unharmed {
            let c = check(&report, other);
            assert_eq!(
                c.status,
                CheckStatus::Pass,
                "{flaw:?} should leave {other}: {}",
                c.reason
            );
        }
    }
    let since = verify_app(Flaw::AppSinceNow);
    let c = check(&since, "app-session");
    assert_eq!(c.status, CheckStatus::Fail, "{}", c.reason);
    assert!(c.reason.contains("since moved"), "{}", c.reason);
}

fn load(server: &TestServer, count: u64) -> LoadResult {
    let url = parse_url(&server.url("/")).unwrap();
    let (requests, session) = app_load(&url, 11, 20);
    let plan = LoadPlan {
        sources: Vec::new(),
        io: Default::default(),
        addr: server.addr,
        connections: 3,
        workers: 1,
        stop: Stop::Count(count),
        pacing: Pacing::Closed,
        warmup: Duration::ZERO,
        timeout: Duration::from_secs(10),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        requests,
        ws: None,
        tls: None,
        session: Some(session),
        h2: false,
    };
    run(&plan, &RunControl::new(&plan)).unwrap()
}

#[test]
fn under_load_every_page_of_every_session_is_checked_and_breaks_are_counted() {
    // Three browsers, each through two whole sessions and their logouts.
    let n = 3 * 2 * u64::from(PAGES_PER_SESSION + 1);
    let good = serve_contract(Flaw::None);
    let r = load(&good, n);
    assert_eq!((r.requests, r.errors.total()), (n, 0), "{:?}", r.errors);
    // Gzip pages of about 10 KB: far fewer bytes on the wire per answer.
    let per_answer = r.bytes_read / r.requests;
    assert!(
        (1_000..5_000).contains(&per_answer),
        "{per_answer} bytes per answer"
    );

    // A counter shared by the sessions: each browser sees the others'
    // visits, so after its first page most pages break the session.
    let r = load(&serve_contract(Flaw::AppGlobalCounter), n);
    assert!(r.errors.get(ErrorKind::Session) > n / 3, "{:?}", r.errors);
    assert_eq!(r.errors.get(ErrorKind::Body), 0, "{:?}", r.errors);

    // No cookie: every first page is a session error, and so every page.
    let r = load(&serve_contract(Flaw::AppNoCookie), 30);
    assert_eq!(r.errors.get(ErrorKind::Session), 30, "{:?}", r.errors);

    // Unescaped rows are wrong pages; plain text claimed as gzip is encoding.
    let r = load(&serve_contract(Flaw::AppUnescaped), 30);
    assert_eq!(r.errors.get(ErrorKind::Body), 30, "{:?}", r.errors);
    let r = load(&serve_contract(Flaw::GzipClaimPlain), 30);
    assert_eq!(r.errors.get(ErrorKind::Encoding), 30, "{:?}", r.errors);
}
