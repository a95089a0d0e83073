//! The hostile kind's attackers: `netbench attack KIND URL` started as a
//! process apart from the good load, on the client's CPUs, in a process
//! group of its own watched by the same guard as a server (so it dies with
//! netbench however netbench ends), bounded by its own deadline and killed
//! at ours; its one JSON object read back. It runs under SCHED_IDLE: on
//! the client's CPUs it takes only the time the good load's client leaves,
//! so the good load's latency is the server's answer to the attack and not
//! its own client queued behind the attacker's threads.

use std::io::Read;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::server::{in_own_group, spawn_guard, stop_guard, tell_group, Cleanup};

/// Past its own deadline, how long an attacker has to print its JSON and
/// exit before its group is killed.
const GRACE: Duration = Duration::from_secs(3);

/// One running attack.
pub(crate) struct Attacker {
    child: Child,
    /// Kills the attacker's group if netbench dies before it is reaped.
    guard: Option<Child>,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
    /// When the attacker must be gone: its `--for` plus [`GRACE`].
    kill_at: Instant,
}

/// What an attacker left: its JSON, or why there is none.
pub(crate) type Report = Result<serde_json::Value, String>;

/// The command line an attack runs with (after the program).
pub(crate) fn attack_args(
    attack: &str,
    addr: SocketAddr,
    connections: u32,
    length: Duration,
) -> Vec<String> {
    vec![
        "attack".into(),
        attack.into(),
        format!("http://{addr}/"),
        "--connections".into(),
        connections.to_string(),
        "--for".into(),
        format!("{}ms", length.as_millis()),
        "--json".into(),
    ]
}

impl Attacker {
    /// Starts `program attack ...` against `addr` on `cpus` (the client's:
    /// the caller's own when None).
    pub(crate) fn start(
        program: &Path,
        attack: &str,
        addr: SocketAddr,
        connections: u32,
        length: Duration,
        cpus: Option<&[usize]>,
    ) -> Result<Attacker, String> {
        let mut cmd = Command::new(program);
        cmd.args(attack_args(attack, addr, connections, length))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let own = crate::placement::allowed_cpus();
        let cpus = cpus.unwrap_or(&own);
        in_own_group(&mut cmd, (!cpus.is_empty()).then_some(cpus));
        // SAFETY: between fork and exec only sched_setscheduler, a system
        // call; any process may lower itself to SCHED_IDLE, and the
        // attacker's threads inherit it.
        unsafe {
            cmd.pre_exec(|| {
                let param = libc::sched_param { sched_priority: 0 };
                if libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // The guard first, as for a server: a netbench killed between the
        // spawn and the guard would leave the attacker running.
        let mut guard = spawn_guard(None, None, Cleanup::Nothing);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                stop_guard(&mut guard);
                return Err(format!(
                    "could not start the attacker {} ({e}): is netbench built with `attack`?",
                    program.display()
                ));
            }
        };
        tell_group(&mut guard, child.id());
        let drain = |r: Option<Box<dyn Read + Send>>| {
            r.map(|mut r| {
                std::thread::spawn(move || {
                    let mut s = String::new();
                    // Bounded: an attacker prints one object and a few lines.
                    let _ = r.by_ref().take(1 << 20).read_to_string(&mut s);
                    s
                })
            })
        };
        let stdout = drain(
            child
                .stdout
                .take()
                .map(|o| Box::new(o) as Box<dyn Read + Send>),
        );
        let stderr = drain(
            child
                .stderr
                .take()
                .map(|o| Box::new(o) as Box<dyn Read + Send>),
        );
        Ok(Attacker {
            child,
            guard,
            stdout,
            stderr,
            kill_at: Instant::now() + length + GRACE,
        })
    }

    /// Waits for the attacker to end by itself (killed at its deadline and
    /// grace), then reads what it printed.
    pub(crate) fn finish(mut self) -> Report {
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < self.kill_at => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break None,
            }
        };
        self.kill_group();
        let out = self
            .stdout
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let err = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let tail = stderr_gist(&err);
        match status {
            None => Err(format!(
                "the attacker was still running {GRACE:?} past its deadline and was killed"
            )),
            Some(s) if !s.success() => Err(format!("the attacker failed ({s}): {tail}")),
            Some(_) => parse_report(&out),
        }
    }

    /// Kills whatever is left of the attacker's group, reaps it and stops
    /// the guard. Idempotent.
    fn kill_group(&mut self) {
        if self.guard.is_some() {
            // SAFETY: kill with a negative pid signals the attacker's own
            // group (its id is the child's, made by setpgid before exec).
            unsafe {
                libc::kill(-(self.child.id() as i32), libc::SIGKILL);
            }
            let _ = self.child.wait();
            stop_guard(&mut self.guard);
        }
    }
}

impl Drop for Attacker {
    fn drop(&mut self) {
        self.kill_group();
    }
}

/// What an attacker's stderr says went wrong: a panic's place and message
/// (not the backtrace after them), else its last line that is not a note.
pub(crate) fn stderr_gist(err: &str) -> String {
    let lines: Vec<&str> = err
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if let Some(i) = lines.iter().position(|l| l.contains("panicked at")) {
        return lines[i..]
            .iter()
            .take(2)
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
    }
    lines
        .iter()
        .rev()
        .find(|l| !l.starts_with("note:"))
        .unwrap_or(&"")
        .to_string()
}

/// The attacker's JSON: the last line that parses as an object.
pub(crate) fn parse_report(out: &str) -> Report {
    out.lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .find(serde_json::Value::is_object)
        .or_else(|| {
            serde_json::from_str::<serde_json::Value>(out.trim())
                .ok()
                .filter(serde_json::Value::is_object)
        })
        .ok_or_else(|| {
            let head: String = out.chars().take(200).collect();
            format!("the attacker printed no JSON object: {head:?}")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_attackers_object_and_says_when_there_is_none() {
        let one = r#"{"kind":"slowloris","connections_opened":10}"#;
        assert_eq!(parse_report(one).unwrap()["connections_opened"], 10);
        // Pretty-printed over several lines.
        let pretty = "{\n  \"kind\": \"malformed\",\n  \"requests_sent\": 5\n}\n";
        assert_eq!(parse_report(pretty).unwrap()["requests_sent"], 5);
        let noise = format!("starting\n{one}\n");
        assert_eq!(parse_report(&noise).unwrap()["kind"], "slowloris");
        assert!(parse_report("").unwrap_err().contains("no JSON object"));
        assert!(parse_report("[1,2]").is_err());
    }

    #[test]
    fn a_panic_is_told_by_its_place_and_message_not_its_backtrace() {
        let panic = "thread 'main' panicked at crates/attack/src/flood.rs:90:5:\n\
                     index out of bounds\nstack backtrace:\n   0: foo\n\
                     note: Some details are omitted\n";
        assert_eq!(
            stderr_gist(panic),
            "thread 'main' panicked at crates/attack/src/flood.rs:90:5: index out of bounds"
        );
        assert_eq!(
            stderr_gist("error: bad url\nnote: see --help\n"),
            "error: bad url"
        );
        assert_eq!(stderr_gist(""), "");
    }

    #[test]
    fn the_command_line_is_the_attack_interface() {
        let addr: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(
            attack_args("slow-read", addr, 50, Duration::from_millis(2500)).join(" "),
            "attack slow-read http://127.0.0.1:8080/ --connections 50 --for 2500ms --json"
        );
    }

    /// The pids of group `pgid`'s members that are not zombies.
    fn running_in_group(pgid: i32) -> Vec<i32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let pid: i32 = e.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
                // After the command's closing parenthesis: state, ppid, pgrp.
                let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
                let state = rest.next()?;
                let pgrp: i32 = rest.nth(1)?.parse().ok()?;
                (pgrp == pgid && state != "Z" && state != "X").then_some(pid)
            })
            .collect()
    }

    #[test]
    fn an_attacker_runs_under_sched_idle() {
        let dir = std::env::temp_dir().join(format!("netbench-idle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("attacker.sh");
        // Field 41 of /proc/<pid>/stat is the scheduling policy (5: SCHED_IDLE).
        std::fs::write(
            &script,
            "#!/bin/sh\nset -- $(cat /proc/$$/stat)\nshift 40\necho \"{\\\"policy\\\": $1}\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
        // A long deadline: finish returns when the script exits, and a
        // SCHED_IDLE script on a machine busy on every CPU may take a while
        // to get its few milliseconds.
        let length = Duration::from_secs(30);
        let a = Attacker::start(&script, "slowloris", addr, 1, length, None).unwrap();
        let report = a.finish().unwrap();
        assert_eq!(report["policy"], libc::SCHED_IDLE, "{report}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_attacker_that_outlives_its_deadline_is_killed_with_its_group() {
        let dir = std::env::temp_dir().join(format!("netbench-attacker-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("attacker.sh");
        // A child of the attacker that would hold on forever: killed with
        // the group, so the pipes close and finish returns.
        std::fs::write(&script, "#!/bin/sh\nsleep 600 &\nsleep 600\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let a = Attacker::start(&script, "slowloris", addr, 1, Duration::ZERO, None).unwrap();
        let pgid = a.child.id() as i32;
        let err = a.finish().unwrap_err();
        assert!(err.contains("killed"), "{err}");
        // Killed processes may linger a moment as zombies until their new
        // parent reaps them: only a running member would be a leftover. A
        // member sent SIGKILL closes its pipes early in its exit and may
        // then wait for CPU to finish dying: under SCHED_IDLE, on a machine
        // busy on every CPU (the test run itself), that takes a while. So a
        // bounded wait; a member the kill missed would run for 600 s.
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while !running_in_group(pgid).is_empty() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            running_in_group(pgid).is_empty(),
            "the attacker's group outlived finish() by 20 s: {:?}",
            running_in_group(pgid)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
