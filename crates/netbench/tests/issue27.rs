//! Regressions of issue 27 ("Hardening II") in `load` and `merge`: each
//! test gives the hostile input the issue reported and checks the answer.

mod common;

use common::{netbench, text};

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use netbench_testkit::{serve, Behavior};

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

/// One real part file, written by `load`.
fn a_part(dir: &std::path::Path, name: &str) -> PathBuf {
    let server = serve(Behavior::Good);
    let path = dir.join(name);
    let out = netbench(&[
        "load",
        "--quiet",
        "-n",
        "50",
        "--histogram-out",
        path.to_str().unwrap(),
        &server.url("/"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    path
}

/// A copy of `part` with its netbench line changed by `edit`.
fn edited(part: &std::path::Path, to: PathBuf, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let text = std::fs::read_to_string(part).unwrap();
    let out: String = text
        .lines()
        .map(|l| match l.strip_prefix("#netbench ") {
            Some(json) => {
                let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
                edit(&mut v);
                format!("#netbench {v}\n")
            }
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&to, out).unwrap();
    to
}

#[test]
fn merge_refuses_a_part_given_twice_and_counts_it_cannot_trust() {
    let dir = scratch("merge-trust");
    let a = a_part(&dir, "a.hlog");
    let a_str = a.to_str().unwrap();
    refused(&netbench(&["merge", a_str, a_str]), "same file");
    let copy = dir.join("copy.hlog");
    std::fs::copy(&a, &copy).unwrap();
    refused(
        &netbench(&["merge", a_str, copy.to_str().unwrap()]),
        "same part",
    );

    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: [(&str, &str, Edit); 4] = [
        (
            "max",
            "do not agree",
            Box::new(|v| v["result"]["requests"] = u64::MAX.into()),
        ),
        (
            "tera",
            "do not agree",
            Box::new(|v| v["result"]["requests"] = 1_000_000_000_000u64.into()),
        ),
        (
            "errors",
            "do not agree",
            Box::new(|v| v["result"]["errors"][0] = u64::MAX.into()),
        ),
        (
            "conns",
            "do not agree",
            Box::new(|v| v["result"]["configured_connections"] = u64::MAX.into()),
        ),
    ];
    for (name, says, edit) in cases {
        let bad = edited(&a, dir.join(format!("{name}.hlog")), edit);
        refused(&netbench(&["merge", bad.to_str().unwrap()]), says);
    }
}

#[test]
fn merge_does_not_depend_on_order_and_flags_parts_apart_in_time() {
    let dir = scratch("merge-order");
    let a = a_part(&dir, "a.hlog");
    // The same load a minute later: apart in time.
    let later = edited(&a, dir.join("later.hlog"), |v| {
        for i in 0..2 {
            let t = v["result"]["window_unix_ns"][i].as_u64().unwrap();
            v["result"]["window_unix_ns"][i] = (t + 60_000_000_000).into();
        }
    });
    let (a, later) = (a.to_str().unwrap(), later.to_str().unwrap());
    let forward = netbench(&["merge", "--json", a, later]);
    let backward = netbench(&["merge", "--json", later, a]);
    assert_eq!(forward.status.code(), Some(0), "{}", text(&forward.stderr));
    assert_eq!(text(&forward.stdout), text(&backward.stdout));
    let err = text(&forward.stderr);
    assert!(err.contains("did not all run at the same time"), "{err}");
    let json: serde_json::Value = serde_json::from_slice(&forward.stdout).unwrap();
    let reasons = json["verdict"]["reasons"].to_string();
    assert!(reasons.contains("not judged"), "{reasons}");
    assert_eq!(json["verdict"]["client_bound"], false, "{reasons}");
}

/// 1,000 parts used to hold ~540 KB each (544 MB); folded in as they are
/// read, the merge holds a few megabytes whatever their number.
#[test]
fn merge_of_a_thousand_parts_stays_small() {
    let dir = scratch("merge-many");
    let a = a_part(&dir, "a.hlog");
    let text_a = std::fs::read_to_string(&a).unwrap();
    let mut files = Vec::new();
    for i in 0..1000u64 {
        // Distinct parts: windows a nanosecond apart, all overlapping.
        let path = dir.join(format!("p{i}.hlog"));
        let out: String = text_a
            .lines()
            .map(|l| match l.strip_prefix("#netbench ") {
                Some(json) => {
                    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
                    let t = v["result"]["window_unix_ns"][0].as_u64().unwrap();
                    v["result"]["window_unix_ns"][0] = (t + i).into();
                    format!("#netbench {v}\n")
                }
                None => format!("{l}\n"),
            })
            .collect();
        std::fs::write(&path, out).unwrap();
        files.push(path.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge".to_string(), "--json".to_string()];
    args.extend(files);
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 400000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_netbench"))
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["requests"], 50_000);
    assert_eq!(json["parts"].as_array().unwrap().len(), 1000);
}

#[test]
fn the_verdict_says_not_judged_when_a_rule_has_too_little() {
    let server = serve(Behavior::Good);
    // One request for 100 connections.
    let out = netbench(&["load", "-n", "1", "-c", "100", &server.url("/")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("client-bound: YES"), "{stdout}");
    assert!(stdout.contains("in flight not judged"), "{stdout}");
    // A rate over a run that ended by its count.
    let out = netbench(&["load", "-R", "10", "-n", "3", &server.url("/")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("target rate not judged"), "{stdout}");
    assert!(!stdout.contains("% of the target rate"), "{stdout}");
}

#[test]
fn an_unusable_source_address_is_usage_before_the_run() {
    // 192.0.2.1 (TEST-NET-1) is no address of this machine.
    let out = netbench(&[
        "load",
        "-d",
        "5s",
        "--source",
        "192.0.2.1",
        "http://127.0.0.1:9/",
    ]);
    refused(&out, "--source 192.0.2.1 is not usable here");
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr).lines().count(),
        1,
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn more_processes_than_connections_says_it_caps() {
    let server = serve(Behavior::Good);
    let out = netbench(&[
        "load",
        "-n",
        "20",
        "-c",
        "2",
        "--processes",
        "4",
        &server.url("/"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("--processes 4 is more than the 2 connections; running 2"),
        "{err}"
    );
}

#[test]
fn a_damaged_part_is_described_not_debug_printed() {
    let dir = scratch("merge-damaged");
    let a = a_part(&dir, "a.hlog");
    let text_a = std::fs::read_to_string(&a).unwrap();
    // The latency histogram cut short.
    let cut: String = text_a
        .lines()
        .map(|l| {
            if l.starts_with("Tag=latency,") {
                format!("{}\n", &l[..l.len() - 40])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let bad = dir.join("cut.hlog");
    std::fs::write(&bad, cut).unwrap();
    let out = netbench(&["merge", bad.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("latency histogram does not decode"), "{err}");
    assert!(
        !err.contains("Custom {") && !err.contains("IoError("),
        "{err}"
    );
}

/// Issue 27 (low): a store error named its cause twice over (`file is not a
/// database; check ...: file is not a database: Error code 26: file is not
/// a database`). Each cause is said once.
#[test]
fn a_store_error_says_its_cause_once() {
    let dir = std::env::temp_dir().join(format!("netbench-i27-words-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("not-a-store.sqlite");
    std::fs::write(&db, "not a database, just text\n").unwrap();
    let out = netbench(&["runs", "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("file is not a database").count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
