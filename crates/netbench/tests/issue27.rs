//! Regressions of issue 27 ("Hardening II") in `load` and `merge`: each
//! test gives the hostile input the issue reported and checks the answer.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use netbench_testkit::{serve, Behavior};

fn netbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netbench"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("netbench runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit 2, a message on stderr, and no panic.
fn refused(out: &Output, says: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(says), "wanted `{says}` in: {err}");
}

#[test]
fn start_at_past_the_clock_s_range_is_usage_not_a_panic() {
    for far in [
        "99999999999999999999",
        "18446744073709551616",
        "9300000000000000000",
    ] {
        let out = netbench(&["load", "-n", "1", "--start-at", far, "http://127.0.0.1:9/"]);
        refused(&out, "too far ahead");
    }
}

#[test]
fn start_at_ahead_says_how_long_it_waits() {
    let server = serve(Behavior::Good);
    let out = netbench(&["load", "-n", "1", "--start-at", "+1s", &server.url("/")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("waiting 1.0s for --start-at") || err.contains("waiting 0.9s for --start-at"),
        "{err}"
    );
}

/// A fresh folder for this test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netbench-issue27-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn histogram_out_that_cannot_be_written_is_refused_before_measuring() {
    let server = serve(Behavior::Good);
    let dir = scratch("hout-dir");
    let folder = dir.to_str().unwrap();
    for json in [false, true] {
        let mut args = vec!["load", "-d", "3s", "--histogram-out", folder];
        if json {
            args.push("--json");
        }
        let url = server.url("/");
        args.push(&url);
        let started = Instant::now();
        let out = netbench(&args);
        refused(&out, "is a folder");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "refused only after measuring"
        );
    }
    let out = netbench(&["merge", "--histogram-out", folder, "/nonexistent/a.hlog"]);
    refused(&out, "is a folder");

    // A path in a folder that does not exist yet: the folder is made.
    let nested = dir.join("not/yet/load.hlog");
    let out = netbench(&[
        "load",
        "-n",
        "5",
        "--histogram-out",
        nested.to_str().unwrap(),
        &server.url("/"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(nested.is_file());
    assert!(!dir.join("not/yet/load.hlog.partial").exists());
}

#[test]
fn a_histogram_file_that_fails_after_the_run_keeps_the_result() {
    let server = serve(Behavior::Good);
    let dir = scratch("hout-gone");
    let file = dir.join("sub/load.hlog");
    let child = Command::new(env!("CARGO_BIN_EXE_netbench"))
        .args([
            "load",
            "--quiet",
            "-d",
            "2s",
            "--json",
            "--histogram-out",
            file.to_str().unwrap(),
            &server.url("/"),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The folder goes while the load runs: the rename at the end fails.
    std::thread::sleep(Duration::from_millis(1000));
    std::fs::remove_dir_all(dir.join("sub")).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no result printed ({e}): {}", text(&out.stderr)));
    assert!(result["requests"].as_u64().unwrap() > 0, "{result}");
    assert!(text(&out.stderr).contains("writing the histogram file"));
}
