//! `netbench attack` as the hostile scenarios run it: the loopback-only
//! refusal, the bounds, the JSON summary, stopping by itself at --for and on
//! SIGTERM, and every documented exit code.

mod common;

use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::{netbench, text};
use netbench_testkit::{refused_addr, serve_contract, Flaw};
use serde_json::Value;

/// Waits for `child` up to `limit`; kills it and fails if it runs on.
fn wait_bounded(child: &mut Child, limit: Duration) -> ExitStatus {
    let give_up = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= give_up {
            let _ = child.kill();
            panic!("netbench attack ran past {limit:?}: it must stop by itself");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_netbench"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn summary_of(stdout: &[u8]) -> Value {
    let line = text(stdout);
    assert_eq!(
        line.lines().count(),
        1,
        "one JSON object on one line: {line}"
    );
    serde_json::from_str(&line).unwrap()
}

/// The keys the hostile scenarios read (docs/guide/attack.md), and
/// schema/attack-summary.v1.schema.json.
fn assert_summary_shape(v: &Value, kind: &str) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/attack-summary.v1.schema.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let problems: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(v["kind"], kind);
    for key in [
        "connections",
        "connections_opened",
        "closed_by_server",
        "requests_sent",
        "bytes_sent",
        "bytes_received",
    ] {
        assert!(v[key].is_u64(), "{key} in {v}");
    }
    for key in ["2xx", "4xx", "5xx", "other"] {
        assert!(v["answers"][key].is_u64(), "answers.{key} in {v}");
    }
    for key in ["connect", "reset", "timeout", "other"] {
        assert!(v["errors"][key].is_u64(), "errors.{key} in {v}");
    }
    assert!(v["seconds"].is_f64(), "{v}");
}

#[test]
fn attack_refuses_every_target_off_loopback_with_exit_2() {
    for url in [
        "http://192.0.2.1:80/",
        "http://10.0.0.1:8080/",
        "http://0.0.0.0:8080/",
        "http://[2001:db8::1]:80/",
        "http://[::ffff:192.0.2.1]:80/",
    ] {
        let out = netbench(&["attack", "slowloris", url, "-c", "1", "--for", "1s"]);
        assert_eq!(out.status.code(), Some(2), "{url}");
        let err = text(&out.stderr);
        assert!(err.contains("refusing to attack"), "{url}: {err}");
        assert!(err.contains("loopback"), "{url}: {err}");
        assert!(out.stdout.is_empty(), "{url}: nothing ran");
    }
}

#[test]
fn attack_refuses_out_of_range_bounds_with_exit_2() {
    let url = format!("http://{}/", refused_addr());
    for args in [
        vec!["attack", "malformed", &url, "-c", "0", "--for", "1s"],
        vec!["attack", "malformed", &url, "-c", "1025", "--for", "1s"],
        vec!["attack", "slowloris", &url, "-c", "65537", "--for", "1s"],
        vec!["attack", "slowloris", &url, "-c", "1", "--for", "0s"],
        vec!["attack", "slowloris", &url, "-c", "1", "--for", "25h"],
        vec![
            "attack",
            "slowloris",
            &url,
            "-c",
            "1",
            "--for",
            "1s",
            "--interval",
            "2s",
        ],
        vec!["attack", "ddos", &url, "-c", "1", "--for", "1s"],
        vec![
            "attack",
            "slowloris",
            "https://127.0.0.1:1/",
            "-c",
            "1",
            "--for",
            "1s",
        ],
        vec!["attack", "slowloris", &url, "--for", "1s"],
    ] {
        let out = netbench(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn attack_stops_by_itself_at_its_deadline_and_prints_json() {
    let server = serve_contract(Flaw::None);
    let url = format!("http://{}/", server.addr);
    let mut child = spawn(&[
        "attack",
        "malformed",
        &url,
        "-c",
        "2",
        "--for",
        "1s",
        "--json",
    ]);
    let status = wait_bounded(&mut child, Duration::from_secs(8));
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(0), "{}", text(&out.stderr));
    let v = summary_of(&out.stdout);
    assert_summary_shape(&v, "malformed");
    assert_eq!(v["connections"], 2);
    assert!(v["requests_sent"].as_u64().unwrap() > 0, "{v}");
    assert!(v["answers"]["4xx"].as_u64().unwrap() > 0, "{v}");
    assert!(v["seconds"].as_f64().unwrap() >= 1.0, "{v}");
}

#[test]
fn attack_stops_on_sigterm_or_sigint_with_exit_130_and_its_summary() {
    let server = serve_contract(Flaw::None);
    let url = format!("http://{}/", server.addr);
    for (kind, signal) in [("slowloris", libc::SIGTERM), ("tcp-frag", libc::SIGINT)] {
        let mut child = spawn(&["attack", kind, &url, "-c", "3", "--for", "60s", "--json"]);
        std::thread::sleep(Duration::from_millis(800));
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let status = wait_bounded(&mut child, Duration::from_secs(5));
        let out = child.wait_with_output().unwrap();
        assert_eq!(status.code(), Some(130), "{kind}: {}", text(&out.stderr));
        let v = summary_of(&out.stdout);
        assert_summary_shape(&v, kind);
        assert!(v["connections_opened"].as_u64().unwrap() >= 1, "{v}");
    }
}

#[test]
fn attack_with_nothing_listening_exits_1_with_its_summary() {
    let url = format!("http://{}/", refused_addr());
    let out = netbench(&["attack", "conn-flood", &url, "-c", "2", "--for", "500ms"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    assert!(
        line.starts_with("conn-flood: 0 connections opened"),
        "{line}"
    );
    assert!(text(&out.stderr).contains("is the server listening"));
}

#[test]
fn attack_help_documents_kinds_bounds_and_exit_codes() {
    let out = netbench(&["attack", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for needle in [
        "slowloris",
        "slow-read",
        "malformed",
        "oversized",
        "conn-flood",
        "tcp-frag",
        "--connections",
        "--for",
        "--interval",
        "--path",
        "--json",
        "loopback",
        "65536",
        "1024",
        "Exit codes:",
        "130",
    ] {
        assert!(help.contains(needle), "{needle} missing from attack --help");
    }
}

#[test]
fn attack_holds_no_more_connections_than_the_open_file_limit_allows() {
    use std::os::unix::process::CommandExt;
    let server = serve_contract(Flaw::None);
    let url = format!("http://{}/", server.addr);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_netbench"));
    cmd.args([
        "attack",
        "conn-flood",
        &url,
        "-c",
        "500",
        "--for",
        "1s",
        "--json",
    ])
    .stdin(Stdio::null());
    // SAFETY: setrlimit is async-signal-safe; the child only lowers its own
    // limit (soft and hard) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 100,
                rlim_max: 100,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("the open-file limit allows 36 connections"),
        "{}",
        text(&out.stderr)
    );
    let v = summary_of(&out.stdout);
    assert_summary_shape(&v, "conn-flood");
    assert_eq!(v["connections"], 36);
    assert_eq!(v["connections_opened"], 36, "{v}");
}

/// Issue 42 (low): a hard open-file limit of 60 leaves no room beside the 64
/// descriptors kept free; it said "64 open files are needed for 0
/// connections". It says what the limit leaves and how to raise it.
#[test]
fn attack_under_a_tiny_open_file_limit_says_what_the_limit_leaves() {
    use std::os::unix::process::CommandExt;
    let server = serve_contract(Flaw::None);
    let url = format!("http://{}/", server.addr);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_netbench"));
    cmd.args(["attack", "conn-flood", &url, "-c", "5", "--for", "1s"])
        .stdin(Stdio::null());
    // SAFETY: setrlimit is async-signal-safe; the child only lowers its own
    // limit (soft and hard) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 60,
                rlim_max: 60,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("for 0 connections"), "{err}");
    assert!(
        err.contains("the open-file limit (60) leaves no room for a connection"),
        "{err}"
    );
    assert!(err.contains("ulimit -n"), "{err}");
}
