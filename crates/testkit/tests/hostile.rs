//! The hostile kind end to end through `netbench run`'s runner (issue 33):
//! a tiny cell against the contract server, its attackers a script that
//! speaks `netbench attack`'s interface, so that what the cell does around
//! an attack is tested on its own: an attack that holds connections, one
//! that crashes the server (the next attack gets a fresh process and its
//! own baseline), and an attacker that fails. No attacker outlives the run.

mod common;

use std::path::Path;

use common::{fake_server, request, scratch, Quiet};

use netbench_suite::kinds::Facts;
use netbench_suite::run_suite;
use netbench_suite::store::{MeasurementStatus, RunStatus, Store};

/// `attack KIND URL --connections N --for Dms --json`, as netbench's:
/// slowloris holds N idle connections for the length; malformed kills the
/// server listening on the URL's port (a crash, made certain); conn-flood
/// fails. A marker in its path lets the test find leftovers.
const ATTACKER: &str = r#"#!/bin/bash
kind=$2; url=$3; n=$5; ms=${7%ms}
hostport=${url#http://}; hostport=${hostport%/}
host=${hostport%:*}; port=${hostport##*:}
secs=$(awk "BEGIN{print $ms/1000}")
case $kind in
slowloris)
  opened=0
  for i in $(seq 1 "$n"); do
    exec {fd}<>"/dev/tcp/$host/$port" && opened=$((opened+1))
  done
  sleep "$secs"
  echo "{\"kind\":\"slowloris\",\"connections_opened\":$opened,\"closed_by_server\":0,\"requests_sent\":0,\"answers\":{\"2xx\":0,\"4xx\":0,\"5xx\":0,\"other\":0},\"bytes_sent\":0,\"bytes_received\":0,\"errors\":{},\"seconds\":$secs}"
  ;;
malformed)
  pid=$(ss -Hltnp "sport = :$port" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
  [ -n "$pid" ] && kill -9 "$pid"
  sleep "$secs"
  echo "{\"kind\":\"malformed\",\"connections_opened\":1,\"requests_sent\":1,\"seconds\":$secs}"
  ;;
*)
  echo "netbench attack: no such attack here" >&2
  exit 2
  ;;
esac
"#;

const SUITE: &str = r#"
servers = ["steady"]
repetitions = 1
cooldown = "0s"
quiet_wait = "0s"

[[scenarios]]
name = "abuse"
kind = "hostile"
endpoint = "blank"
connections = [2]
duration = "1s"
rate = 200
attacks = ["slowloris", "malformed", "conn-flood"]
attack_connections = 5
attack_for = "1s"
after = "1s"
window = "250ms"
"#;

fn leftovers(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            cmd.contains(marker).then_some(cmd)
        })
        .collect()
}

fn write_attacker(path: &Path) {
    std::fs::write(path, ATTACKER).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

#[test]
fn a_hostile_cell_measures_each_attack_restarts_after_a_crash_and_leaves_nothing() {
    let work = scratch("hostile");
    let dir = work.join("servers");
    fake_server(&dir, "steady", "true", "");
    let attacker = work.join("hostile-attacker-under-test.sh");
    write_attacker(&attacker);
    let mut req = request(SUITE, dir, &work);
    req.attacker = Some(attacker.clone());
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
    let run = store.run(outcome.run).unwrap();
    let m = &run.measurements[0];
    assert_eq!(m.status, MeasurementStatus::Ok, "{:?}", m.failure);
    let Some(Facts::Hostile(h)) = &m.facts else {
        panic!("no hostile facts: {:?}", m.facts)
    };
    assert_eq!(h.rate_per_s, 200.0);
    assert!(h.baseline.requests > 0, "{:?}", h.baseline);
    assert_eq!(h.baseline.success_rate(), 1.0, "{:?}", h.baseline);
    let names: Vec<&str> = h.attacks.iter().map(|a| a.attack.as_str()).collect();
    assert_eq!(names, ["slowloris", "malformed", "conn-flood"]);

    let slow = &h.attacks[0];
    assert_eq!(slow.crashed, None);
    assert!(!slow.restarted && !slow.stopped_accepting);
    assert_eq!(slow.attacker.as_ref().unwrap()["connections_opened"], 5);
    assert!(slow.during.requests > 0);
    assert!(!slow.windows.is_empty() && slow.after.is_some());
    assert!(slow.during.rss_peak_bytes.is_some());

    let crash = &h.attacks[1];
    assert!(crash.crashed.is_some(), "{crash:?}");
    // The server was gone: nothing to measure after it.
    assert!(crash.after.is_none() && crash.windows.is_empty());
    assert_eq!(crash.recovery_s, None);

    let next = &h.attacks[2];
    assert!(next.restarted, "a fresh process after the crash");
    let fresh = next
        .baseline
        .as_ref()
        .expect("the fresh process's baseline");
    assert!(fresh.requests > 0);
    assert_eq!(next.crashed, None);
    assert!(next.during.requests > 0, "{:?}", next.during);
    let why = next.attacker_failure.as_deref().unwrap();
    assert!(why.contains("no such attack here"), "{why}");

    // The report's table ranks the one server and tells the crash.
    let report = netbench_report::build_report(&run);
    let t = &report.hostile[0];
    assert_eq!(t.rows.len(), 1);
    assert_eq!(t.rows[0].broken, 1);
    assert!(
        t.worst.iter().any(|w| w.contains("the server crashed")),
        "{:?}",
        t.worst
    );

    drop(store);
    assert!(
        leftovers("hostile-attacker-under-test").is_empty(),
        "attackers outlived the run: {:?}",
        leftovers("hostile-attacker-under-test")
    );
    let _ = std::fs::remove_dir_all(&work);
}
