//! The netbench binary as a user runs it: help, output formats, exit codes,
//! body pools and Ctrl-C, against test servers on 127.0.0.1:0.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{assert_load_schema, netbench, text};
use netbench_testkit::{serve, Behavior};
use serde_json::Value;

#[test]
fn load_help_explains_every_option() {
    let out = netbench(&["load", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for flag in [
        "--connections",
        "--threads",
        "--duration",
        "--requests",
        "--rate",
        "--warmup",
        "--timeout",
        "--no-keepalive",
        "--pipeline",
        "--method",
        "--header",
        "--body",
        "--body-file",
        "--body-pool",
        "--expect-status",
        "--expect-content-type",
        "--expect-body",
        "--expect-json",
        "--max-error-rate",
        "--json",
        "--quiet",
        "--source",
        "--start-at",
        "--histogram-out",
        "--processes",
        "--io",
        "--cacert",
        "--insecure",
        "--tls-resume",
        "--tls-version",
    ] {
        assert!(help.contains(flag), "--help does not mention {flag}");
    }
    assert!(help.contains("Exit codes"));
    assert!(help.contains("130"));

    let out = netbench(&["merge", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for word in ["--json", "--histogram-out", "union", "Exit codes"] {
        assert!(help.contains(word), "merge --help does not mention {word}");
    }
}

#[test]
fn text_output_ends_with_the_verdict() {
    let server = serve(Behavior::Good);
    let out = netbench(&[
        "load",
        "-c",
        "2",
        "-n",
        "100",
        "--expect-body",
        "OK",
        &server.url("/"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("100 good, 0 errors"), "{stdout}");
    assert!(
        stdout.lines().last().unwrap().starts_with("client-bound: "),
        "{stdout}"
    );
}

#[test]
fn json_output_matches_the_schema() {
    let server = serve(Behavior::Good);
    let out = netbench(&[
        "load",
        "-c",
        "4",
        "-t",
        "2",
        "-n",
        "200",
        "--json",
        &server.url("/blank"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_load_schema(&json);
    assert_eq!(json["requests"], 200);
    assert_eq!(json["settings"]["workers"], 2);
    assert_eq!(json["target"]["url"], server.url("/blank"));
}

/// Issue 42: a run no longer than `--timeout` against a server that never
/// answers read "0 good, 0 errors" and exited 0, in closed and open loop.
/// What was still waiting is counted apart, in the text and the JSON, and
/// a run with nothing answered exits 1.
#[test]
fn issue42_a_run_with_nothing_answered_exits_1_and_counts_what_waited() {
    let server = serve(Behavior::Silent);
    for rate in [None, Some("100")] {
        let mut args = vec!["load", "-c", "2", "-d", "1s", "--timeout", "5s"];
        if let Some(r) = rate {
            args.extend(["-R", r]);
        }
        let url = server.url("/");
        args.push(&url);
        let out = netbench(&args);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{rate:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("nothing was answered while measuring"),
            "{stderr}"
        );
        assert!(stdout.contains("0 good, 0 errors"), "{stdout}");
        assert!(
            stdout
                .contains("unfinished   2 requests still in flight at the end, the oldest waiting"),
            "{stdout}"
        );
        assert!(stdout.contains(": nothing was answered"), "{stdout}");
        args.insert(1, "--json");
        let out = netbench(&args);
        assert_eq!(out.status.code(), Some(1));
        let json: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
        assert_load_schema(&json);
        assert_eq!(json["unfinished"]["requests"], 2, "{json}");
        assert_eq!(json["unfinished"]["stalled"], true, "{json}");
        assert!(
            json["unfinished"]["oldest_s"].as_f64().unwrap() >= 0.9,
            "{json}"
        );
    }
    // A healthy run still ends with requests in flight: no line, exit 0.
    let good = serve(Behavior::Good);
    let out = netbench(&["load", "-c", "2", "-d", "1s", &good.url("/")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        !text(&out.stdout).contains("unfinished"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn error_rate_above_the_limit_exits_1() {
    let server = serve(Behavior::Status(500));
    let out = netbench(&["load", "-c", "1", "-n", "10", &server.url("/")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("status 10"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stderr).contains("--max-error-rate"));
    let out = netbench(&[
        "load",
        "-c",
        "1",
        "-n",
        "10",
        "--max-error-rate",
        "1",
        &server.url("/"),
    ]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn usage_and_runtime_failures_exit_2_with_a_way_out() {
    let out = netbench(&[
        "load",
        "--cacert",
        "/nonexistent/ca.pem",
        "https://127.0.0.1:1/",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("could not read --cacert /nonexistent/ca.pem"));
    let out = netbench(&["load", "--insecure", "http://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--insecure is for TLS"));

    let out = netbench(&["load", "-d", "1s", "-n", "3", "http://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(2));

    // A million connections to one address: first the ports, then (with
    // the addresses given but one process forced) the open-file limit.
    let out = netbench(&["load", "-c", "1000000", "-n", "1", "http://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--source 127.0.0.1-127.0.0."),
        "{}",
        text(&out.stderr)
    );
    let out = netbench(&[
        "load",
        "-c",
        "1000000",
        "-n",
        "1",
        "--source",
        "127.0.0.1-127.0.0.64",
        "--processes",
        "1",
        "http://127.0.0.1:1/",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("open-file limit"),
        "{}",
        text(&out.stderr)
    );

    let out = netbench(&[
        "load",
        "--body-pool",
        "/nonexistent/pool.jsonl",
        "http://127.0.0.1:1/",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent/pool.jsonl"));
}

#[test]
fn body_pool_requests_are_checked_one_by_one() {
    let server = serve(Behavior::ReverseBody);
    let dir = std::env::temp_dir().join(format!("netbench-cli-pool-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pool = dir.join("pool.jsonl");
    std::fs::write(
        &pool,
        "{\"body\": \"abc\", \"expect_body\": \"cba\"}\n{\"body_json\": \"ab\", \"expect_json\": \"ba\", \"expect_status\": 200}\n",
    )
    .unwrap();
    let out = netbench(&[
        "load",
        "-c",
        "2",
        "-n",
        "40",
        "--body-pool",
        pool.to_str().unwrap(),
        &server.url("/"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("POST"));
    assert!(text(&out.stdout).contains("40 good"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ctrl_c_prints_the_result_so_far_marked_interrupted() {
    let server = serve(Behavior::Good);
    let child = Command::new(env!("CARGO_BIN_EXE_netbench"))
        .args(["load", "-c", "2", "-d", "60s", "--json", &server.url("/")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("a result is printed");
    assert_eq!(json["interrupted"], true);
    assert!(json["requests"].as_u64().unwrap() > 0);
    assert!(json["duration_s"].as_f64().unwrap() < 30.0);
}

#[test]
fn verify_passes_a_conforming_server_and_fails_a_canned_one() {
    use netbench_testkit::{serve_contract, Flaw};
    let good = serve_contract(Flaw::None);
    let out = netbench(&["verify", "--documents", "10", &good.url("/")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("PASS  work"), "{stdout}");
    assert!(stdout.trim_end().ends_with("conforms"), "{stdout}");

    let canned = serve_contract(Flaw::CannedWork);
    let out = netbench(&["verify", "--documents", "10", "--json", &canned.url("/")]);
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["conforms"], false);
    let work = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "work")
        .unwrap();
    assert_eq!(work["status"], "fail");
    assert!(json["seed"].is_u64());

    let out = netbench(&["verify", "https://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("over cleartext"));
}

#[test]
fn the_work_test_under_load_catches_a_caching_server() {
    use netbench_testkit::{serve_contract, Flaw};
    let good = serve_contract(Flaw::None);
    let out = netbench(&[
        "load",
        "-c",
        "4",
        "-n",
        "400",
        "--work",
        "100",
        "--seed",
        "1",
        &good.url("/work"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("400 good, 0 errors"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains("100 generated documents of 10 dates, seed 1"));

    let cached = serve_contract(Flaw::CachedWork);
    let out = netbench(&[
        "load",
        "-c",
        "4",
        "-n",
        "400",
        "--work",
        "100",
        "--seed",
        "1",
        &cached.url("/work"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("errors       body "),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn hostile_input_is_refused_with_exit_2_and_a_way_out() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["verify", "--timeout", "0s", "http://127.0.0.1:9/"],
            "above zero",
        ),
        (
            &["load", "--timeout", "0s", "http://127.0.0.1:9/"],
            "above zero",
        ),
        (
            &[
                "load",
                "--work",
                "1000000",
                "--work-dates",
                "10000",
                "http://127.0.0.1:9/work",
            ],
            "at most 2000000",
        ),
        (&["load", "http://127.0.0.1:9/a b"], "percent-encode"),
        (
            &["verify", "http://127.0.0.1:9/x\r\nX-Evil: 1"],
            "percent-encode",
        ),
    ];
    for (args, says) in cases {
        let out = netbench(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn server_text_reaches_the_terminal_with_its_escapes_made_visible() {
    let server = serve(Behavior::Escapes);
    let out = netbench(&["verify", "--timeout", "2s", &server.url("/")]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        !stdout.contains('\u{1b}'),
        "raw ESC reached the terminal: {stdout:?}"
    );
    assert!(stdout.contains("\\u{1b}[2J"), "{stdout}");
}

#[test]
fn issue29_an_impossible_slo_exits_1_and_a_generous_one_0() {
    let server = serve(Behavior::Good);
    let url = server.url("/");
    let load = |extra: &[&str]| {
        let mut args = vec!["load", "-c", "2", "-n", "200", "--quiet"];
        args.extend_from_slice(extra);
        args.push(&url);
        netbench(&args)
    };
    // No answer comes back within a nanosecond.
    let out = load(&["--slo-p99", "1ns"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("netbench: p99 latency ") && stderr.contains(" is above --slo-p99 1ns by "),
        "{stderr}"
    );
    // Every one missed is named, and the result is still printed.
    let out = load(&["--slo-p50", "1ns", "--slo-p999", "1ns"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--slo-p50 1ns") && stderr.contains("--slo-p999 1ns"),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("200 good, 0 errors"));
    // The load's timeout is 5 s, so nothing it counts can take 10 s.
    let out = load(&["--slo-p50", "10s", "--slo-p99", "10s", "--slo-p999", "10s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("slo"), "{}", text(&out.stderr));
    // The same exit code as --max-error-rate, both reported.
    let failing = serve(Behavior::Status(500));
    let out = netbench(&[
        "load",
        "-c",
        "1",
        "-n",
        "10",
        "--slo-p99",
        "10s",
        &failing.url("/"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--max-error-rate"), "{stderr}");
    assert!(
        stderr.contains("no good answer was measured, so there is no p99 latency"),
        "{stderr}"
    );
}

#[test]
fn issue29_slo_values_that_mean_nothing_exit_2_in_one_line() {
    for (value, says) in [
        ("0ms", "--slo-p99 `0ms` is zero"),
        ("-5ms", "--slo-p99 `-5ms` is negative"),
        ("5", "--slo-p99 `5` has no unit"),
        ("soon", "`soon` is not a duration"),
    ] {
        let out = netbench(&["load", "--slo-p99", value, "http://127.0.0.1:9/"]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value}: {stderr}");
        assert!(stderr.contains(says), "{value}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{value}: {stderr}");
    }
    let help = text(&netbench(&["load", "--help"]).stdout);
    for flag in ["--slo-p50", "--slo-p99", "--slo-p999"] {
        assert!(help.contains(flag), "--help does not mention {flag}");
    }
}

/// Issue 33: `--conformance-only` scores any server and exits 0 whatever
/// the score; `--conformance` adds the score to verify's JSON without
/// changing its exit code; bad input and an absent server exit 2.
#[test]
fn conformance_probes_are_a_score_not_a_gate() {
    use netbench_testkit::{serve_contract, Flaw};
    let lax = serve_contract(Flaw::LaxHost);
    let out = netbench(&[
        "verify",
        "--conformance-only",
        "--path",
        "/blank",
        "--json",
        &lax.url("/"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["path"], "/blank");
    let c = &json["conformance"];
    assert_eq!(
        c["passed"].as_u64().unwrap() + 3,
        c["total"].as_u64().unwrap()
    );
    let failed: Vec<&str> = c["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["status"] == "fail")
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["host-missing", "host-double", "host-invalid"]);

    let out = netbench(&[
        "verify",
        "--conformance-only",
        "--path",
        "/blank",
        &lax.url("/"),
    ]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("FAIL  host-missing  RFC 9112 §3.2"),
        "{stdout}"
    );
    assert!(stdout.contains("cases passed, 3 failed"), "{stdout}");

    let out = netbench(&[
        "verify",
        "--documents",
        "5",
        "--conformance",
        "--json",
        &lax.url("/"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["conforms"], true);
    assert!(json["conformance"]["total"].as_u64().unwrap() >= 25);
    let out = netbench(&["verify", "--documents", "5", "--json", &lax.url("/")]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["conformance"].is_null());

    for (args, says) in [
        (vec!["--conformance-only", "--path", "blank"], "--path"),
        (vec!["--path", "/x"], "--conformance-only"),
        (vec!["--conformance-only", "--ws"], "cannot be used with"),
    ] {
        let url = lax.url("/");
        let all: Vec<&str> = ["verify"]
            .into_iter()
            .chain(args.clone())
            .chain([url.as_str()])
            .collect();
        let out = netbench(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let gone = netbench_testkit::refused_addr();
    let out = netbench(&["verify", "--conformance-only", &format!("http://{gone}/")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is the server running"),
        "{}",
        text(&out.stderr)
    );
}
