//! `netbench verify --static --upload --json-comp` as a user runs it,
//! against the contract server on 127.0.0.1:0: the flags run their parts'
//! checks, and a flawed part fails verify.

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
    assert!(stdout.contains("contract v1.3"), "{stdout}");

    let out = netbench(&["verify", "--documents", "5", &good.url("/")]);
    let stdout = text(&out.stdout);
    for part in [
        "static",
        "upload",
        "json-comp",
        "fortunes",
        "queries",
        "updates",
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
