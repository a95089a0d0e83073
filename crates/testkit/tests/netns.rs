//! Scenarios with `placement = "netns"` end to end through `netbench run`'s
//! runner against the contract server: the server in a network namespace of
//! its own, reached over a veth pair (shaped by tbf when asked), the path
//! stored with each measurement, and no namespace or veth left behind, even
//! by a runner killed with SIGKILL. Needs root and iproute2; says so and
//! passes without them. Traffic goes only to loopback and to the namespaces
//! these tests make.

mod common;

use std::net::IpAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{fake_server, request, scratch, Quiet};

use netbench_suite::kinds::Facts;
use netbench_suite::store::{MeasurementStatus, RunStatus, Store};
use netbench_suite::{run_suite, NetPlacement};

/// Why these tests cannot run here, if they cannot.
fn cannot_run() -> Option<String> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    let works = |tool: &str| {
        Command::new(tool)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !(works("ip") && works("tc")) {
        return Some("no `ip` or `tc` (iproute2)".into());
    }
    None
}

/// The namespaces and veth ends (host side) that netbench process `pid`
/// made and that still exist.
fn leftovers_of(pid: u32) -> Vec<String> {
    let mut found = Vec::new();
    let ns_prefix = format!("nb-{pid}-");
    for e in std::fs::read_dir("/run/netns")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&ns_prefix) {
            found.push(format!("namespace {name}"));
        }
    }
    let if_prefix = format!("nb{pid}h");
    for e in std::fs::read_dir("/sys/class/net")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&if_prefix) {
            found.push(format!("interface {name}"));
        }
    }
    found
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

const LAN: &str = r#"
servers = ["good"]
cooldown = "10ms"
quiet_wait = "0s"
[[scenarios]]
name = "blank"
endpoint = "blank"
connections = [2]
duration = "500ms"
[[scenarios]]
name = "blank-veth"
endpoint = "blank"
connections = [2]
duration = "500ms"
placement = "netns"
[[scenarios]]
name = "work-veth-1gbit"
endpoint = "work"
connections = [2]
duration = "500ms"
placement = "netns"
bandwidth = "1gbit"
[[scenarios]]
name = "storm-veth"
endpoint = "blank"
kind = "storm"
connections = [20]
placement = "netns"
"#;

#[test]
fn a_server_in_a_namespace_is_measured_over_veth_and_nothing_is_left_behind() {
    if let Some(why) = cannot_run() {
        eprintln!("skipped: network namespaces need root and iproute2 ({why})");
        return;
    }
    let work = scratch("netns");
    let servers = work.join("servers");
    let tag = format!("--tag netns-{}", std::process::id());
    fake_server(&servers, "good", "true", &tag);
    let req = request(LAN, servers, &work);
    let mut store = Store::open(&work.join("db.sqlite")).unwrap();
    let outcome = run_suite(
        &req,
        &mut store,
        &mut Quiet {
            cancel_after: None,
            finished: 0,
        },
    )
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    drop(store);
    let run = Store::open(&work.join("db.sqlite"))
        .unwrap()
        .run(outcome.run)
        .unwrap();
    assert_eq!(run.measurements.len(), 4);
    for m in &run.measurements {
        assert_eq!(
            m.status,
            MeasurementStatus::Ok,
            "{}: {:?}",
            m.key.scenario,
            m.failure
        );
        let net = m
            .network
            .as_ref()
            .expect("every measured cell keeps its path");
        let veth = m.key.scenario != "blank";
        if veth {
            // The server could only listen there from inside its namespace:
            // the address exists nowhere else.
            assert_eq!(net.placement, NetPlacement::Netns, "{net:?}");
            assert_eq!(net.mtu, 1500);
            let IpAddr::V4(server) = net.server_addr else {
                panic!("{net:?}")
            };
            let IpAddr::V4(client) = net.client_addr else {
                panic!("{net:?}")
            };
            assert_eq!(server.octets()[..2], [10, 213], "{net:?}");
            assert_eq!(u32::from(server), u32::from(client) + 1, "one /30");
        } else {
            assert_eq!(net.placement, NetPlacement::Loopback, "{net:?}");
            assert!(net.server_addr.is_loopback(), "{net:?}");
        }
        let shaped = m.key.scenario == "work-veth-1gbit";
        assert_eq!(
            net.bandwidth.map(|b| b.bits_per_s),
            shaped.then_some(1_000_000_000),
            "{}",
            m.key.scenario
        );
        assert_eq!(net.burst_bytes, shaped.then_some(125_000));
    }
    // The storm read the server's listen queue in its namespace.
    let storm = run
        .measurements
        .iter()
        .find(|m| m.key.scenario == "storm-veth")
        .unwrap();
    let Some(Facts::Storm(facts)) = &storm.facts else {
        panic!("{:?}", storm.facts)
    };
    assert_eq!(facts.answered, 20, "{facts:?}");
    assert!(facts.listen_backlog.is_some(), "{facts:?}");

    assert_eq!(leftovers_of(std::process::id()), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&work);
}

/// The environment variable that makes [`runner_to_be_killed`] run.
const CHILD: &str = "NETBENCH_NETNS_TEST_CHILD";

/// Not a test on its own: run by [`no_namespace_outlives_a_killed_runner`]
/// in a process of its own (this test binary again), which it then kills.
/// Without the variable it does nothing.
#[test]
fn runner_to_be_killed() {
    let Some(work) = std::env::var_os(CHILD) else {
        return;
    };
    let work = Path::new(&work);
    let suite = r#"
        servers = ["good"]
        quiet_wait = "0s"
        [[scenarios]]
        name = "blank-veth"
        endpoint = "blank"
        connections = [1]
        duration = "30s"
        placement = "netns"
        bandwidth = "1gbit"
    "#;
    let req = request(suite, work.join("servers"), work);
    let mut store = Store::open(&work.join("db.sqlite")).unwrap();
    let _ = run_suite(
        &req,
        &mut store,
        &mut Quiet {
            cancel_after: None,
            finished: 0,
        },
    );
}

#[test]
fn no_namespace_outlives_a_killed_runner() {
    if let Some(why) = cannot_run() {
        eprintln!("skipped: network namespaces need root and iproute2 ({why})");
        return;
    }
    let work = scratch("netns-kill");
    let tag = format!("netns-kill-{}", std::process::id());
    fake_server(
        &work.join("servers"),
        "good",
        "true",
        &format!("--tag {tag}"),
    );
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "runner_to_be_killed", "--nocapture"])
        .env(CHILD, &work)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // The cell's namespace exists and the server runs in it (after verify,
    // which is on loopback).
    let server_in_namespace = || {
        !leftovers_of(pid).is_empty()
            && std::fs::read_dir("/run/netns")
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with(&format!("nb-{pid}-"))
                        && Command::new("ip")
                            .args(["netns", "pids", &name])
                            .output()
                            .is_ok_and(|o| !o.stdout.is_empty())
                })
    };
    let started = wait_until(Duration::from_secs(30), server_in_namespace);
    child.kill().unwrap(); // SIGKILL: only the guards can clean up
    child.wait().unwrap();
    assert!(started, "the server never started in its namespace");
    assert!(
        wait_until(Duration::from_secs(5), || leftovers_of(pid).is_empty()),
        "left behind by the killed runner: {:?}",
        leftovers_of(pid)
    );
    assert!(
        wait_until(Duration::from_secs(5), || !processes_with(&tag)),
        "the server outlived the runner"
    );
    // A killed runner cannot remove its servers' logs; the test does.
    let logs = format!("netbench-{pid}-");
    for e in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with(&logs) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// Whether a process other than this test's has `marker` in its command line.
fn processes_with(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
            let c = String::from_utf8_lossy(&c);
            c.contains(marker) && !c.contains("runner_to_be_killed")
        })
    })
}
