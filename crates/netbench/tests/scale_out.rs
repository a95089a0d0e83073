//! Scale-out as a user runs it, against test servers on 127.0.0.1:0: loads
//! in child processes merged into one result, separate processes started
//! together and merged from their histogram files, and the refusals.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use netbench_testkit::{serve, Behavior};
use serde_json::Value;

fn netbench() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_netbench"));
    cmd.stdin(Stdio::null());
    cmd
}

fn run(args: &[&str]) -> Output {
    netbench().args(args).output().expect("netbench runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netbench-scale-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn child_processes_split_an_exact_count_and_merge_it() {
    let server = serve(Behavior::Good);
    let out = run(&[
        "load",
        "-c",
        "12",
        "-n",
        "3000",
        "--processes",
        "3",
        "--source",
        "127.0.0.1-127.0.0.3",
        "--json",
        "--quiet",
        &server.url("/"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = json(&out);
    assert_eq!(
        u(&v["attempts"]),
        3000,
        "the count is exact across processes"
    );
    assert_eq!(u(&v["requests"]), 3000);
    assert_eq!(
        u(&v["connections_answered"]),
        12,
        "every connection answered"
    );
    assert_eq!(u(&v["memory"]["processes"]), 3);
    let parts = v["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    let sum: u64 = parts.iter().map(|p| u(&p["requests"])).sum();
    assert_eq!(sum, 3000, "total = sum of the parts");
    assert!(parts.iter().all(|p| u(&p["connections"]) == 4));
}

#[test]
fn processes_started_together_merge_into_one_exact_result() {
    let server = serve(Behavior::Good);
    let dir = scratch("merge");
    let start = SystemTime::now() + Duration::from_secs(2);
    let start_s = format!(
        "{:.3}",
        start.duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
    );
    let files: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("part-{i}.hlog"))).collect();
    let children: Vec<_> = files
        .iter()
        .map(|f| {
            netbench()
                .args([
                    "load",
                    "-c",
                    "4",
                    "-d",
                    "1s",
                    "--quiet",
                    "--start-at",
                    &start_s,
                    "--histogram-out",
                    f.to_str().unwrap(),
                    &server.url("/"),
                ])
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let names: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let mut parts = Vec::new();
    for name in &names {
        let alone = run(&["merge", "--json", name]);
        assert!(alone.status.success(), "{}", text(&alone.stderr));
        parts.push(json(&alone));
    }
    let mut args = vec!["merge", "--json"];
    args.extend(&names);
    let out = run(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged = json(&out);

    let total: u64 = parts.iter().map(|p| u(&p["requests"])).sum();
    assert_eq!(u(&merged["requests"]), total, "total = sum of the parts");
    assert_eq!(u(&merged["concurrency"]["configured"]), 12);
    let p50s: Vec<f64> = parts
        .iter()
        .map(|p| p["latency_us"]["p50"].as_f64().unwrap())
        .collect();
    let p50 = merged["latency_us"]["p50"].as_f64().unwrap();
    let lo = p50s.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = p50s.iter().copied().fold(0.0, f64::max);
    assert!(
        (lo..=hi).contains(&p50),
        "merged p50 {p50} outside {lo}..{hi}"
    );
    // Same start: the measured windows open within a few milliseconds.
    let starts: Vec<u64> = parts.iter().map(|p| u(&p["window_unix_ns"][0])).collect();
    let spread = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    assert!(spread < 200_000_000, "windows opened {spread} ns apart");
    let wanted = u(&parts[0]["window_unix_ns"][0]) as i128
        - (start.duration_since(UNIX_EPOCH).unwrap().as_nanos() as i128);
    assert!(
        wanted.abs() < 200_000_000,
        "started {wanted} ns off the asked time"
    );

    let textual = run(&["merge", names[0], names[1]]);
    let shown = text(&textual.stdout);
    assert!(shown.contains("parts        2 merged exactly"), "{shown}");
    assert!(shown.contains("part-1.hlog"), "{shown}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scale_out_refusals_say_what_to_do() {
    let server = serve(Behavior::Good);
    let dir = scratch("refusals");
    let past = run(&[
        "load",
        "--start-at",
        "2020-01-01T00:00:00Z",
        &server.url("/"),
    ]);
    assert_eq!(past.status.code(), Some(2));
    assert!(
        text(&past.stderr).contains("in the past"),
        "{}",
        text(&past.stderr)
    );

    let bad_time = run(&["load", "--start-at", "noon", &server.url("/")]);
    assert_eq!(bad_time.status.code(), Some(2));
    assert!(text(&bad_time.stderr).contains("2026-11-24T12:00:00Z"));

    let ports = run(&[
        "load",
        "-c",
        "100000",
        "--source",
        "127.0.0.1",
        &server.url("/"),
    ]);
    assert_eq!(ports.status.code(), Some(2));
    let e = text(&ports.stderr);
    assert!(e.contains("--source 127.0.0.1-127.0.0."), "{e}");

    let junk = dir.join("junk.hlog");
    std::fs::write(&junk, "not a histogram\n").unwrap();
    let merged = run(&["merge", junk.to_str().unwrap()]);
    assert_eq!(merged.status.code(), Some(2));
    assert!(
        text(&merged.stderr).contains("--histogram-out"),
        "{}",
        text(&merged.stderr)
    );

    let missing = run(&["merge", dir.join("nothing.hlog").to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("nothing.hlog"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_stops_every_child_and_prints_the_merged_partial_result() {
    let server = serve(Behavior::Good);
    let child = netbench()
        .args([
            "load",
            "-c",
            "6",
            "-d",
            "60s",
            "--processes",
            "3",
            "--quiet",
            &server.url("/"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Two seconds of lead, then a second of load.
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: signalling a child we started and have not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("INTERRUPTED"), "{shown}");
    assert!(shown.contains("parts        3 merged exactly"), "{shown}");
}

#[test]
fn no_child_outlives_a_killed_parent() {
    let server = serve(Behavior::Good);
    let mut parent = netbench()
        .args([
            "load",
            "-c",
            "4",
            "-d",
            "60s",
            "--processes",
            "2",
            "--quiet",
            &server.url("/"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = parent.id();
    let children_file = format!("/proc/{pid}/task/{pid}/children");
    let mut children = Vec::new();
    for _ in 0..50 {
        children = std::fs::read_to_string(&children_file)
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        if children.len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(children.len(), 2, "two parts started");
    parent.kill().unwrap();
    parent.wait().unwrap();
    let gone = |c: &String| {
        std::fs::read_to_string(format!("/proc/{c}/stat")).map_or(true, |s| s.contains(") Z "))
    };
    let parts_dir = has_parts_dir(pid);
    for _ in 0..50 {
        if children.iter().all(gone) {
            let left = has_parts_dir(pid);
            assert!(parts_dir, "the parts' folder existed while they ran");
            assert!(!left, "the killed parent's parts folder was left behind");
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("parts {children:?} outlived their killed parent");
}

/// Whether the parts' folder of the fanned-out load `pid` exists.
fn has_parts_dir(pid: u32) -> bool {
    let prefix = format!("netbench-parts-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with(&prefix))
}
