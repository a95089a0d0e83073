//! How the runner starts servers and runs build steps: run commands as
//! written with arguments passed as arguments, build and test steps bounded
//! in time and memory, cancel honoured. Each server here is a shell script in
//! a scratch folder.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use netbench_suite::{build, parse_manifest, start, BuildError, ServerManifest, StartSpec};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netbench-pc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn manifest(dir: &Path, extra: &str) -> ServerManifest {
    let text = format!(
        "name = \"s\"\nlanguage = \"sh\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\n{extra}\n"
    );
    parse_manifest(&dir.join("server.toml"), "s", &text).unwrap()
}

fn wait_for(path: &Path) -> String {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if let Ok(t) = std::fs::read_to_string(path) {
            if t.ends_with("end\n") {
                return t;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never written", path.display());
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .count()
}

/// The processes running `sleep MARKER` itself (not a shell whose command
/// line mentions it).
fn daemons_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                let args: Vec<&[u8]> = c.split(|&b| b == 0).collect();
                args.len() >= 2 && args[0] == b"sleep" && args[1] == marker.as_bytes()
            })
        })
        .count()
}

#[test]
fn run_commands_run_as_written_and_arguments_stay_arguments() {
    for run in ["MARK=set ./srv.sh", "./srv.sh"] {
        let dir = scratch(if run.starts_with("MARK") {
            "assign"
        } else {
            "exec"
        });
        let script = dir.join("srv.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\n{ echo \"mark=${MARK:-unset}\"; for a in \"$@\"; do echo \"arg=$a\"; done; echo end; } > out.txt\nexec sleep 30\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let m = manifest(&dir, &format!("run = \"{run}\""));
        let spec = StartSpec {
            args: vec!["two words".into(), "$(touch pwned)".into()],
            ..StartSpec::at(([127, 0, 0, 1], 9).into())
        };
        let mut server = start(&dir, &m, &spec).unwrap();
        let out = wait_for(&dir.join("out.txt"));
        let want_mark = if run.starts_with("MARK") {
            "set"
        } else {
            "unset"
        };
        assert_eq!(
            out,
            format!("mark={want_mark}\narg=two words\narg=$(touch pwned)\nend\n"),
            "{run}"
        );
        assert!(!dir.join("pwned").exists(), "{run}: an argument was run");
        server.stop(Duration::from_secs(5));
        assert!(server.exited().is_some(), "{run}: still running after stop");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_build_that_hangs_is_stopped_at_its_timeout_with_its_children() {
    let dir = scratch("hang");
    let marker = format!("31.{}", std::process::id());
    let m = manifest(
        &dir,
        &format!(
            "run = \"x\"\nbuild = \"sleep {marker} & sleep {marker}\"\nbuild_timeout = \"1s\""
        ),
    );
    let started = Instant::now();
    let err = build(&dir, &m, &AtomicBool::new(false)).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(err, BuildError::TimedOut { .. }), "{err}");
    assert!(err.to_string().contains("build_timeout"), "{err}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        processes_with(&marker),
        0,
        "the build's processes outlived it"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cancel_stops_a_build() {
    let dir = scratch("cancel");
    let m = manifest(&dir, "run = \"x\"\nbuild = \"sleep 30\"");
    let cancel = AtomicBool::new(false);
    let started = Instant::now();
    let err = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            cancel.store(true, Ordering::Relaxed);
        });
        build(&dir, &m, &cancel).unwrap_err()
    });
    assert!(matches!(err, BuildError::Cancelled { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_chatty_failing_build_keeps_the_end_of_its_output_on_disk_and_a_tail_in_the_error() {
    let dir = scratch("chatty");
    let m = manifest(
        &dir,
        "run = \"x\"\nbuild = \"yes 0123456789 | head -c 5000000; echo LAST-LINE >&2; exit 3\"",
    );
    let err = build(&dir, &m, &AtomicBool::new(false)).unwrap_err();
    let BuildError::Failed {
        log, tail, status, ..
    } = &err
    else {
        panic!("{err}");
    };
    assert!(status.contains('3'), "{status}");
    assert!(tail.len() <= 2000 && tail.contains("LAST-LINE"), "{tail}");
    // Issue 27: the whole output was kept (96 MB once); its last MiB is,
    // after a line that says how much went.
    let kept = std::fs::read_to_string(log).unwrap();
    assert!(kept.len() <= (1 << 20) + 100, "{} bytes kept", kept.len());
    assert!(
        kept.starts_with("[netbench: the first "),
        "{}",
        &kept[..100]
    );
    assert!(kept.ends_with("LAST-LINE\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 27 item 1: a run line that starts a daemon in a session of its own
/// (out of the server's process group) before it execs the server; the stop
/// takes the daemon too.
#[test]
fn issue27_a_daemon_that_left_the_group_goes_with_the_server() {
    let dir = scratch("setsid-run");
    let marker = format!("1234.{}", std::process::id());
    let m = manifest(
        &dir,
        &format!(
            "run = \"setsid sleep {marker} </dev/null >/dev/null 2>&1 & exec sleep 30.{}\"",
            std::process::id()
        ),
    );
    let mut server = start(&dir, &m, &StartSpec::at(([127, 0, 0, 1], 9).into())).unwrap();
    // The daemon alone: until the run line's shell has exec'd, its own
    // command line names the marker too (a count of 2 failed CI once).
    let until = Instant::now() + Duration::from_secs(10);
    while daemons_with(&marker) == 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(daemons_with(&marker), 1, "the daemon never started");
    server.stop(Duration::from_secs(2));
    assert!(server.exited().is_some());
    assert_eq!(processes_with(&marker), 0, "the daemon outlived the stop");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 42 item 3: a server that writes without pause (3.49 GB in 5 s of
/// one cell) has a log of its first and last MiB, and says how much went.
#[test]
fn issue42_a_server_s_endless_output_is_logged_bounded() {
    let dir = scratch("chatty");
    let m = manifest(&dir, "run = \"yes netbench-chatty-server-line-of-output\"");
    let mut server = start(&dir, &m, &StartSpec::at(([127, 0, 0, 1], 9).into())).unwrap();
    let log = server.log_path().to_path_buf();
    let until = Instant::now() + Duration::from_secs(20);
    // Until well past what is kept (`yes` writes hundreds of MB a second).
    while server.output_cut() < 64 << 20 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let cut = server.output_cut();
    assert!(cut >= 64 << 20, "only {cut} bytes cut in 20 s");
    let len = std::fs::metadata(&log).unwrap().len();
    assert!(len <= (2 << 20) + 200, "the log holds {len} bytes");
    server.stop(Duration::from_secs(2));
    assert!(server.exited().is_some());
    // After the end: the head, the line, the tail.
    let until = Instant::now() + Duration::from_secs(10);
    let mut text = String::new();
    while Instant::now() < until {
        text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("bytes of this server's output were cut here") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(text.starts_with("netbench-chatty-server-line-of-output\n"));
    assert!(
        text.contains("bytes of this server's output were cut here; the last 1048576 follow"),
        "{}",
        &text[(1 << 20) - 100..(1 << 20) + 200]
    );
    assert!(text.len() as u64 <= (2 << 20) + 200);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 27 item 1: a build that leaves a daemon behind in a session of its
/// own; the build's end takes it.
#[test]
fn issue27_a_daemon_a_build_left_behind_is_stopped() {
    let dir = scratch("setsid-build");
    let marker = format!("1235.{}", std::process::id());
    let m = manifest(
        &dir,
        &format!(
            "run = \"x\"\nbuild = \"setsid sleep {marker} </dev/null >/dev/null 2>&1 & sleep 0.3\""
        ),
    );
    build(&dir, &m, &AtomicBool::new(false)).unwrap();
    assert_eq!(processes_with(&marker), 0, "the build's daemon outlived it");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A target folder set for netbench's own build (`CARGO_TARGET_DIR`) is not
/// passed to a server's build, whose artefact is looked for where its
/// manifest says: rust-hyper's was "not found" under a suite run with it.
#[test]
fn a_server_build_does_not_inherit_netbench_s_cargo_target_dir() {
    let dir = scratch("cargo-target-dir");
    // No other test of this binary reads these variables.
    std::env::set_var("CARGO_TARGET_DIR", "/nonexistent/target");
    std::env::set_var("CARGO_BUILD_TARGET_DIR", "/nonexistent/target");
    let m = manifest(
        &dir,
        "run = \"x\"\nbuild = \"echo \\\"[$CARGO_TARGET_DIR][$CARGO_BUILD_TARGET_DIR]\\\" >seen.txt\"",
    );
    build(&dir, &m, &AtomicBool::new(false)).unwrap();
    let seen = std::fs::read_to_string(dir.join("seen.txt")).unwrap();
    assert_eq!(seen, "[][]\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A daemon's child, in the daemon's own session and group, while the
/// daemon is still alive when the step ends: it comes to netbench only when
/// the daemon dies, already a zombie and out of the step's group. It is
/// reaped, not left a zombie for the rest of the run (a `java` of
/// kotlin-ktor's build was, in a `make run` of 2026-11-26).
#[test]
fn a_daemon_whose_parent_outlived_the_step_is_reaped_not_left_a_zombie() {
    let dir = scratch("daemon-of-a-live-parent");
    let m = manifest(
        &dir,
        "run = \"x\"\nbuild = \"setsid sh -c 'sh -c \\\"echo \\\\$\\\\$ >daemon.pid; exec sleep 1237\\\" & wait' \
         </dev/null >/dev/null 2>&1 & sleep 0.3\"",
    );
    build(&dir, &m, &AtomicBool::new(false)).unwrap();
    let pid = std::fs::read_to_string(dir.join("daemon.pid")).unwrap();
    let pid = pid.trim();
    assert!(!pid.is_empty(), "the daemon never started");
    // Gone entirely: neither alive nor a zombie waiting for netbench.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
    assert!(stat.is_err(), "the daemon is left: {stat:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 26: php-fpm's own test stops its server and waits for every
/// process to be gone (`kill -0`, which a zombie passes). As netbench is a
/// subreaper, its orphans came to the step's runner and stayed zombies
/// until the step ended, so the test failed under `make test`. An orphan
/// that exits during a step is reaped while the step still runs.
#[test]
fn issue26_an_orphan_that_exits_during_a_step_is_reaped_at_once() {
    let dir = scratch("orphan-reaped");
    let m = manifest(
        &dir,
        "run = \"x\"\nbuild = \"(setsid sh -c 'echo $$ >orphan.pid; exec sleep 1' </dev/null >/dev/null 2>&1 &); \
         sleep 0.3; p=$(cat orphan.pid); i=0; \
         while kill -0 $p 2>/dev/null; do i=$((i+1)); [ $i -gt 60 ] && exit 7; sleep 0.1; done\"",
    );
    let built = build(&dir, &m, &AtomicBool::new(false));
    assert!(built.is_ok(), "the step saw its orphan linger: {built:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 26, again: php-fpm's test starts and stops its server within half
/// a second, faster than the scan for members, so the orphan was never
/// seen alive and stayed a zombie. An orphan still in the step's process
/// group is the step's, seen or not, and is reaped as soon as it exits.
#[test]
fn issue26_an_orphan_never_seen_alive_is_reaped_too() {
    let dir = scratch("orphan-unseen");
    let m = manifest(
        &dir,
        "run = \"x\"\nbuild = \"(sh -c 'echo $$ >orphan.pid; exec sleep 0.05' </dev/null >/dev/null 2>&1 &); \
         sleep 0.2; p=$(cat orphan.pid); i=0; \
         while kill -0 $p 2>/dev/null; do i=$((i+1)); [ $i -gt 30 ] && exit 7; sleep 0.1; done\"",
    );
    let built = build(&dir, &m, &AtomicBool::new(false));
    assert!(built.is_ok(), "the step saw its orphan linger: {built:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
