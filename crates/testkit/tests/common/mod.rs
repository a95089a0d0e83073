//! Helpers shared by the runner's and the report's end-to-end tests: scratch
//! folders, server folders that run this crate's contract server, a quiet
//! observer and a run request.

// Each test binary uses its own subset of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use netbench_suite::{Event, Observer, RunRequest, Suite};

/// A fresh folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netbench-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A server folder whose run command is the contract server with `args`.
pub fn fake_server(servers: &Path, name: &str, build: &str, args: &str) {
    fake_server_with(servers, name, build, "", "", args);
}

/// [`fake_server`] with more manifest lines (`extra`, each ending in a
/// newline) and a `launcher` written before the server in its run line.
pub fn fake_server_with(
    servers: &Path,
    name: &str,
    build: &str,
    extra: &str,
    launcher: &str,
    args: &str,
) {
    let dir = servers.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_netbench-contract-server");
    std::fs::write(
        dir.join("server.toml"),
        format!(
            "name = \"{name}\"\nlanguage = \"Rust\"\nframework = \"test\"\ndescription = \"a test server\"\nmodel = \"event-loop\"\n\
             {extra}build = \"{build}\"\nrun = \"{launcher}{bin} {args}\"\n"
        ),
    )
    .unwrap();
}

#[derive(Default)]
pub struct Quiet {
    /// Cancel the run after this many finished cells.
    pub cancel_after: Option<(usize, Arc<AtomicBool>)>,
    pub finished: usize,
}

impl Observer for Quiet {
    fn event(&mut self, e: Event<'_>) {
        if let Event::CellFinished { .. } = e {
            self.finished += 1;
            if let Some((n, flag)) = &self.cancel_after {
                if self.finished >= *n {
                    flag.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}

pub fn request(suite: &str, servers: PathBuf, work: &Path) -> RunRequest {
    RunRequest {
        suite: Suite::parse("test", suite).unwrap(),
        servers_dir: servers,
        project_dir: repo(),
        build_cache: work.join("build-cache.json"),
        command: "test".into(),
        resume: None,
        repetitions: None,
        settle: netbench_report::stats::settled,
        cancel: Arc::new(AtomicBool::new(false)),
        ready_within: Duration::from_secs(3),
        attacker: None,
    }
}

/// Where the page checker lives, with its playwright-core installed.
fn checker() -> PathBuf {
    let dir = repo().join("crates/testkit/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed in {}: run `make test` (it runs `npm ci` there and \
         installs Debian's chromium)",
        dir.display()
    );
    dir.join("check.mjs")
}

/// Opens `html` in Chromium through the checker (no console error, no
/// network request, every chart drawn and coloured right); returns its
/// findings.
pub fn check_in_browser(html: &Path, png: &Path) -> serde_json::Value {
    check_in_browser_with(html, png, &[])
}

/// [`check_in_browser`] with the checker's options (`--width`,
/// `--max-height`, `--sections DIR`).
pub fn check_in_browser_with(html: &Path, png: &Path, options: &[String]) -> serde_json::Value {
    let out = std::process::Command::new("node")
        .arg(checker())
        .arg(html)
        .arg(png)
        .args(options)
        .output()
        .expect("node runs (Node.js is part of this machine's kind)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the page check failed on {}:\n{stdout}\n{stderr}",
        html.display()
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}
