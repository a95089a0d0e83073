//! Issue 43 item 5, paired A/B: `netbench compare RUN --pair A B --fail-on
//! RULES` on stores built here, two variants of one server measured round
//! by round in one run, with a round where the host ran at half speed.
//! The exit codes: 0 passed, 1 a regression (or nothing judged, or B lost),
//! 2 bad usage.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use netbench_records::fixtures;
use netbench_suite::records_of::scenario_records_of_text;
use netbench_suite::store::{NewRun, RunStatus, Store};

const SUITE: &str = "servers = [\"*\"]\n\
    [[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [100]\n";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netbench-pair-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One run of server `s` and its variant `b` (at `factor` of s's
/// requests/s) over `rounds` rounds; round 3 at half speed for both, and a
/// wobble of under 1% within each round.
fn store(dir: &Path, variant: &str, factor: f64, rounds: u32) -> PathBuf {
    let path = dir.join("pair.sqlite");
    let store = Store::open(&path).unwrap();
    let run = store
        .begin_run(&NewRun {
            suite_toml: SUITE.into(),
            repetitions: Some(rounds),
            scenarios: scenario_records_of_text("pair", SUITE),
            ..fixtures::new_run("pair")
        })
        .unwrap();
    store
        .record_server(run, &fixtures::server("s", ""))
        .unwrap();
    store
        .record_server(run, &fixtures::server("s", variant))
        .unwrap();
    for round in 1..=rounds {
        let speed = if round == 3 { 0.5 } else { 1.0 };
        let wobble = 1.0 + 0.005 * (f64::from(round % 4) - 1.5);
        let a = fixtures::ok(
            fixtures::key("s", "blank", 100, round),
            20_000.0 * speed * wobble,
        );
        store.record_measurement(run, &a).unwrap();
        let mut b = fixtures::ok(
            fixtures::key("s", "blank", 100, round),
            20_000.0 * factor * speed / wobble,
        );
        b.key.variant = variant.into();
        store.record_measurement(run, &b).unwrap();
    }
    store.set_run_status(run, RunStatus::Complete).unwrap();
    path
}

fn compare(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netbench"))
        .arg("compare")
        .args(args)
        .arg("--db")
        .arg(db)
        .stdin(Stdio::null())
        .output()
        .expect("netbench runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn issue43_an_aa_pair_passes_and_a_planted_five_percent_slowdown_fails() {
    let dir = scratch("aa");
    let db = store(&dir, "twin", 1.0, 12);
    let out = compare(&db, &["1", "--pair", "s", "s:twin", "--fail-on", "rps<-5%"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("paired within rounds"), "{stdout}");
    assert!(
        stdout.lines().last().unwrap().starts_with("gate passed"),
        "{stdout}"
    );

    let dir = scratch("slow");
    let db = store(&dir, "slow", 0.95, 12);
    let out = compare(&db, &["1", "--pair", "s", "s:slow", "--fail-on", "rps<-5%"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("  FAIL blank c=100: rps<-5% -5.0% ["),
        "{stdout}"
    );
    // JSON: the gate's object, and its decision on stderr for a CI log.
    let out = compare(
        &db,
        &[
            "1",
            "--pair",
            "s",
            "s:slow",
            "--fail-on",
            "rps<-5%",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["format"], "netbench-pair/1");
    assert_eq!(json["gate"]["outcome"], "failed");
    assert_eq!(json["rows"][0]["rounds"], 12);
    assert!(
        text(&out.stderr).contains("gate FAILED"),
        "{}",
        text(&out.stderr)
    );
    // Without --fail-on: the comparison alone, exit 0.
    assert_eq!(
        compare(&db, &["1", "--pair", "s", "s:slow"]).status.code(),
        Some(0)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn issue43_too_few_rounds_and_bad_pairs() {
    let dir = scratch("few");
    let db = store(&dir, "slow", 0.5, 3);
    // Three rounds: no interval, nothing judged, the gate fails.
    let out = compare(&db, &["1", "--pair", "s", "s:slow", "--fail-on", "rps<-5%"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("gate FAILED: nothing could be judged"));
    // A server the run does not have, a second run beside --pair, HTML.
    let out = compare(&db, &["1", "--pair", "s", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("`nope` is not a server of run 1; its servers are: s, s:slow"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        compare(&db, &["1", "2", "--pair", "s", "s:slow"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        compare(&db, &["1", "--pair", "s", "s:slow", "--format", "html"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        compare(&db, &["1"]).status.code(),
        Some(2),
        "one run without --pair"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
