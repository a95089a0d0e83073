//! Every server under servers/ builds on this machine, passes its own tests,
//! starts on a free port, passes `verify` with no failed check (with the
//! checks of the parts it offers: db against a private PostgreSQL, its TLS,
//! HTTP/2 and gRPC listeners with a certificate of an authority made here),
//! and answers `/` as /blank or /work when started with the argument 0 or 1.
//! Servers are found by their manifests; none is named here.
//!
//! `NETBENCH_SERVERS=go-nethttp,node-http` checks only the servers named
//! (a comma-separated list of folder names; a name that matches no server
//! fails the test), for work on a few servers without building the whole zoo.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use netbench_contract::{verify, CheckStatus, Client, VerifyOptions, WorkGenerator};
use netbench_suite::listeners::{ask_for_listeners, wait_accepting, Listeners};
use netbench_suite::pki::RunPki;
use netbench_suite::postgres::PrivatePostgres;
use netbench_suite::{
    build, discover, free_port, run_tests, start, Offer, ServerManifest, StartSpec,
};

const READY_WITHIN: Duration = Duration::from_secs(60);

fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../servers")
}

fn client(addr: SocketAddr) -> Client {
    Client::new(addr, Duration::from_secs(5))
}

/// Whether the server offers a part that reads the database.
fn reads_database(m: &ServerManifest) -> bool {
    [Offer::Db, Offer::Fortunes, Offer::Queries, Offer::Updates]
        .into_iter()
        .any(|o| m.offers(o))
}

/// Everything wrong with one server, or nothing. `database_url` is the
/// private PostgreSQL that servers offering db read (their own tests see it
/// too, as DATABASE_URL).
fn check_server(
    dir: &Path,
    m: &ServerManifest,
    database_url: Option<&str>,
    pki: &RunPki,
    took: &mut Took,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut lap = Instant::now();
    let build = build(dir, m, &AtomicBool::new(false));
    took.build = lap.elapsed();
    if let Err(e) = build {
        return vec![e.to_string()];
    }
    lap = Instant::now();
    let tests = run_tests(dir, m, &AtomicBool::new(false));
    took.tests = lap.elapsed();
    if let Err(e) = tests {
        problems.push(e.to_string());
    }
    lap = Instant::now();
    let addr: SocketAddr = ([127, 0, 0, 1], free_port().unwrap()).into();
    // The listeners of contract 1.5 it offers, on ports of their own, with
    // the certificate of an authority made for this test.
    let listeners = Listeners::for_manifest(m).expect("free ports");
    let spec = StartSpec {
        env: database_url
            .map(|u| ("DATABASE_URL".to_string(), u.to_string()))
            .into_iter()
            .chain(pki.server_env())
            .chain(listeners.env())
            .collect(),
        ..StartSpec::at(addr)
    };
    let mut server = match start(dir, m, &spec) {
        Ok(s) => s,
        Err(e) => return vec![e.to_string()],
    };
    if let Err(e) = server.wait_ready(READY_WITHIN) {
        return vec![e.to_string()];
    }
    if let Err(e) = wait_accepting(addr.ip(), &listeners.ports(), READY_WITHIN, || {
        server.exited().is_some()
    }) {
        server.stop(Duration::from_secs(5));
        return vec![e];
    }
    // Every optional part a server offers is checked as the runner checks it.
    let mut options = VerifyOptions::new(client(addr), 0x6e62_7631);
    if reads_database(m) {
        options.database_url = database_url.map(str::to_string);
    }
    netbench_suite::ask_for_offers(&mut options, m);
    ask_for_listeners(&mut options, m, &listeners, addr.ip(), Some(&pki.ca));
    let report = verify(&options);
    for c in &report.checks {
        if c.status == CheckStatus::Fail {
            problems.push(format!("verify {}: {}", c.name, c.reason));
        }
    }
    // A part the server offers is checked, never skipped.
    for part in &m.offers {
        let prefix = format!("{}:", part.as_str());
        if let Some(s) = report.skipped.iter().find(|s| s.starts_with(&prefix)) {
            problems.push(format!(
                "offers {} but its checks were skipped: {s}",
                part.as_str()
            ));
        }
    }
    server.stop(Duration::from_secs(5));
    took.verify = lap.elapsed();
    lap = Instant::now();

    // The NetBenchmarks compatibility mode: `/` as /blank (0) or /work (1).
    let mut case = WorkGenerator::new(7, 10);
    for mode in ["0", "1"] {
        let addr: SocketAddr = ([127, 0, 0, 1], free_port().unwrap()).into();
        let spec = StartSpec {
            args: vec![mode.to_string()],
            ..StartSpec::at(addr)
        };
        let mut server = match start(dir, m, &spec) {
            Ok(s) => s,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        if let Err(e) = server.wait_ready(READY_WITHIN) {
            problems.push(format!("mode {mode}: {e}"));
            continue;
        }
        let c = client(addr);
        let ok = if mode == "0" {
            c.request("GET", "/", None)
                .is_ok_and(|r| r.status == 200 && r.body == b"OK")
        } else {
            let case = case.next_case();
            c.request("POST", "/", Some(&case.body)).is_ok_and(|r| {
                r.status == 200
                    && netbench_engine::BodyExpect::json(case.expected.clone()).matches(&r.body)
            })
        };
        if !ok {
            problems.push(format!(
                "`/` with argument {mode} does not answer as {}",
                if mode == "0" { "/blank" } else { "/work" }
            ));
        }
    }
    took.modes = lap.elapsed();
    problems
}

/// Where one server's check spent its time, printed so that a slow
/// `make test` says which server and which step to look at.
#[derive(Default)]
struct Took {
    build: Duration,
    tests: Duration,
    verify: Duration,
    modes: Duration,
}

impl std::fmt::Display for Took {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "build {:.1} s, own tests {:.1} s, start and verify {:.1} s, `/` modes {:.1} s",
            self.build.as_secs_f64(),
            self.tests.as_secs_f64(),
            self.verify.as_secs_f64(),
            self.modes.as_secs_f64()
        )
    }
}

/// The servers `NETBENCH_SERVERS` names, or all of them when it is unset or
/// empty.
fn selected(
    servers: Vec<(PathBuf, ServerManifest)>,
    only: Option<&str>,
) -> Vec<(PathBuf, ServerManifest)> {
    let names: Vec<&str> = only
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        return servers;
    }
    for n in &names {
        assert!(
            servers.iter().any(|(_, m)| m.name == *n),
            "NETBENCH_SERVERS names `{n}`, which is no server under servers/"
        );
    }
    servers
        .into_iter()
        .filter(|(_, m)| names.contains(&m.name.as_str()))
        .collect()
}

#[test]
fn every_reference_server_builds_and_conforms() {
    let servers = discover(&servers_dir()).expect("server manifests are valid");
    assert!(!servers.is_empty(), "no servers found under servers/");
    let only = std::env::var("NETBENCH_SERVERS").ok();
    let servers = selected(servers, only.as_deref());
    let postgres = servers
        .iter()
        .any(|(_, m)| reads_database(m))
        .then(|| PrivatePostgres::start(None).expect("PostgreSQL starts (make test installs it)"));
    let database_url = postgres.as_ref().map(PrivatePostgres::url);
    if let Some(url) = &database_url {
        // The servers' own tests read it too; this file has one test, so no
        // other thread reads the environment meanwhile.
        std::env::set_var("DATABASE_URL", url);
    }
    let pki = RunPki::make(&std::env::temp_dir()).expect("the test's certificate authority");
    let mut failures = Vec::new();
    for (dir, m) in &servers {
        let mut took = Took::default();
        let problems = check_server(dir, m, database_url.as_deref(), &pki, &mut took);
        eprintln!(
            "{}: {} ({took})",
            m.name,
            if problems.is_empty() {
                "conforms"
            } else {
                "FAILS"
            }
        );
        for p in problems {
            failures.push(format!("{}: {p}", m.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
