//! `netbench verify --static --upload --json-comp` and `--app`, and
//! `netbench load --app`, as a user runs them, against the contract server
//! on 127.0.0.1:0: the flags run their parts' checks, a flawed part fails
//! verify, and a flawed app's pages count under their kind.

mod common;

use common::{netbench, text};
use netbench_testkit::{serve_contract, Flaw};

const CHECKS: [&str; 10] = [
    "static-content",
    "static-length",
    "static-headers",
    "static-304",
    "upload-digest",
    "upload-early",
    "upload-too-large",
    "json-comp-gzip",
    "json-comp-plain",
    "json-comp-br",
];

#[test]
fn the_flags_run_the_parts_checks_and_a_flaw_fails_verify() {
    let good = serve_contract(Flaw::None);
    let flags = [
        "verify",
        "--static",
        "--upload",
        "--json-comp",
        "--documents",
        "5",
    ];
    let out = netbench(&[&flags[..], &[good.url("/").as_str()]].concat());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for check in CHECKS {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains("PASS") && l.contains(check)),
            "{check}: {stdout}"
        );
    }
    assert!(stdout.contains("contract v1.5"), "{stdout}");

    let out = netbench(&["verify", "--documents", "5", &good.url("/")]);
    let stdout = text(&out.stdout);
    for part in [
        "static",
        "upload",
        "json-comp",
        "fortunes",
        "queries",
        "updates",
        "app",
    ] {
        assert!(
            stdout.contains(&format!("skipped: {part}: not asked for (--{part}")),
            "{part}: {stdout}"
        );
    }

    let cheat = serve_contract(Flaw::StaticTruncated);
    let out = netbench(&[&flags[..], &[cheat.url("/").as_str()]].concat());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("static-content")),
        "{stdout}"
    );
}

#[test]
fn app_is_verified_and_loaded_as_browsers_with_a_broken_session_counted() {
    let good = serve_contract(Flaw::None);
    let out = netbench(&["verify", "--app", "--documents", "2", &good.url("/")]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for check in [
        "app-session",
        "app-page",
        "app-gzip",
        "app-ids",
        "app-lock",
        "app-logout",
        "app-errors",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains("PASS") && l.contains(check)),
            "{check}: {stdout}"
        );
    }
    let cheat = serve_contract(Flaw::AppNoLock);
    let out = netbench(&["verify", "--app", "--documents", "2", &cheat.url("/")]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("app-lock")),
        "{stdout}"
    );

    // Under load: 2 browsers, 84 requests (two sessions each with their
    // logouts), every page right; JSON that keeps to the schema.
    let out = netbench(&[
        "load",
        "--app",
        "--seed",
        "3",
        "-c",
        "2",
        "-n",
        "84",
        "--json",
        &good.url("/"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::assert_load_schema(&json);
    assert_eq!(json["requests"], 84, "{json}");
    assert_eq!(json["errors"]["session"], 0, "{json}");
    // A server that never sets its cookie: every page breaks its session,
    // said in the text with what it means.
    let cheat = serve_contract(Flaw::AppNoCookie);
    let out = netbench(&["load", "--app", "-c", "2", "-n", "20", &cheat.url("/")]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("session") && stdout.contains("20 pages"),
        "{stdout}"
    );
}
