//! What a run's numbers depend on besides the servers: CPU, memory, kernel,
//! tool and compiler versions, the project commit. Stored with every run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::placement::allowed_cpus;

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn cpu_model() -> Option<String> {
    read("/proc/cpuinfo")?
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn memory_bytes() -> Option<u64> {
    let kb: u64 = read("/proc/meminfo")?
        .lines()
        .find(|l| l.starts_with("MemTotal:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

fn os_name() -> Option<String> {
    read("/etc/os-release")?
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
}

/// The first line a command prints (stdout, else stderr), if it runs within
/// two seconds; a missing tool is simply absent from the record.
fn version_of(program: &str, args: &[&str], dir: &Path) -> Option<String> {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .next()
        .map(|l| l.trim().to_string())
}

/// Which of the tools `capture` records (its keys) builds and runs servers
/// written in `language`, as a manifest names it: only a tool whose version
/// is the language's (a report writes "Go 1.26.8"). Kotlin and Scala run on
/// the JVM but `java -version` is not their version, nor is Node's that of
/// nginx's njs: none for them.
pub fn tool_for_language(language: &str) -> Option<&'static str> {
    let l = language.to_ascii_lowercase();
    let word = |w: &str| {
        l.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|x| x == w)
    };
    if word("njs") || word("kotlin") || word("scala") {
        None
    } else if l.contains("node") || word("javascript") || word("typescript") {
        Some("node")
    } else if word("rust") {
        Some("rustc")
    } else if word("go") {
        Some("go")
    } else if word("java") {
        Some("java")
    } else if word("python") {
        Some("python3")
    } else if word("c") {
        Some("gcc")
    } else {
        None
    }
}

/// Everything known about this machine and project that could move numbers.
pub fn capture(project_dir: &Path) -> Value {
    let tools: serde_json::Map<String, Value> = [
        ("rustc", "rustc", &["--version"][..]),
        ("go", "go", &["version"][..]),
        ("java", "java", &["-version"][..]),
        ("mvn", "mvn", &["-v"][..]),
        ("node", "node", &["--version"][..]),
        ("python3", "python3", &["--version"][..]),
        ("gcc", "gcc", &["--version"][..]),
    ]
    .into_iter()
    .filter_map(|(key, program, args)| {
        version_of(program, args, project_dir).map(|v| (key.to_string(), Value::String(v)))
    })
    .collect();
    let commit = version_of("git", &["rev-parse", "HEAD"], project_dir);
    let dirty = version_of(
        "git",
        &["status", "--porcelain", "--untracked-files=no"],
        project_dir,
    )
    .is_some();
    json!({
        "netbench_version": env!("CARGO_PKG_VERSION"),
        "cpu_model": cpu_model(),
        // Online CPUs of the machine; available_parallelism would give this
        // process's affinity instead.
        // SAFETY: sysconf only reads a system value.
        "cpus_online": u64::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }).ok(),
        "cpus_allowed": allowed_cpus(),
        "memory_bytes": memory_bytes(),
        "kernel": read("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()),
        "os": os_name(),
        "hostname": read("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()),
        "project_commit": commit,
        "project_dirty": dirty,
        "tools": tools,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_map_to_recorded_tools() {
        assert_eq!(tool_for_language("JavaScript (Node.js)"), Some("node"));
        assert_eq!(tool_for_language("Java"), Some("java"));
        assert_eq!(tool_for_language("Go"), Some("go"));
        assert_eq!(tool_for_language("C"), Some("gcc"));
        assert_eq!(tool_for_language("Erlang"), None);
        // Their version is not the tool's.
        assert_eq!(tool_for_language("Kotlin"), None);
        assert_eq!(tool_for_language("JavaScript (njs)"), None);
    }

    #[test]
    fn describes_this_machine() {
        let env = capture(Path::new(env!("CARGO_MANIFEST_DIR")));
        assert!(env["memory_bytes"].as_u64().unwrap() > 0);
        assert!(env["kernel"].as_str().is_some());
        assert!(!env["cpus_allowed"].as_array().unwrap().is_empty());
        let online = env["cpus_online"].as_u64().unwrap() as usize;
        assert!(online >= env["cpus_allowed"].as_array().unwrap().len());
        // rustc built this test, so it is there.
        assert!(env["tools"]["rustc"]
            .as_str()
            .unwrap()
            .starts_with("rustc "));
        assert_eq!(
            version_of("netbench-no-such-tool", &[], Path::new(".")),
            None
        );
    }
}
