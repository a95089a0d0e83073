//! The report's content, computed once from a stored run and nothing else:
//! who took part and how they were built, every repetition's figures, and per
//! cell the summary, the latency spectrum and what the server used. The HTML,
//! Markdown, CSV and JSON writers only lay it out.

use std::collections::BTreeMap;

use netbench_engine::LoadResult;
use netbench_suite::environment::tool_for_language;
use netbench_suite::store::{MeasurementStatus, RunDetail, ServerRecord};
use netbench_suite::ServerManifest;
use serde::Serialize;

use crate::flag::Flag;
use crate::resources::{rss_per_connection, server_use, ServerUse};
use crate::spectrum::{decode, spectrum, Spectrum};
use crate::stats::summarize;
use crate::suite_table::{label, run_table, CellStats};

/// The version of the JSON report's layout; bumped on any breaking change.
pub const REPORT_FORMAT: &str = "netbench-report/1";

/// Everything a report shows about one run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub format: &'static str,
    pub run: RunInfo,
    pub servers: Vec<ServerInfo>,
    /// Tests in the suite's order, each with its connection counts.
    pub tests: Vec<TestInfo>,
    /// Server labels in column order.
    pub columns: Vec<String>,
    pub cells: Vec<Cell>,
    pub repetitions: Vec<Repetition>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub id: i64,
    pub suite: String,
    pub status: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub command: String,
    pub environment: serde_json::Value,
    pub placement: serde_json::Value,
    /// The suite file as the run used it: what to rerun it with.
    pub suite_toml: String,
    /// Repetitions given on the command line in place of the file's, if any.
    pub repetitions_override: Option<u32>,
    /// Seeds the generated work documents (None for runs stored before it
    /// was kept).
    pub work_seed: Option<u64>,
}

/// One server variant: what it is, how it was built, how it fared in
/// verification.
#[derive(Debug, Clone, Serialize)]
pub struct ServerInfo {
    pub label: String,
    pub language: String,
    /// The oldest version the code needs, from the manifest ("" if unsaid).
    pub language_min: String,
    /// The version of the language's tool this run used, from the run's
    /// environment (None when netbench does not know the tool).
    pub toolchain: Option<String>,
    pub framework: String,
    pub description: String,
    pub build_status: String,
    /// How long the build of the artefact in use took (this run's, or the
    /// earlier one reused while the sources were unchanged); None for a
    /// variant, which shares its server's build.
    pub build_s: Option<f64>,
    pub artefact_bytes: Option<u64>,
    /// From start to the first good answer.
    pub ready_s: Option<f64>,
    pub verify: Option<VerifyCounts>,
    pub excluded_reason: Option<String>,
}

/// Verification outcome: counts, and the non-passing checks with reasons.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyCounts {
    pub pass: usize,
    pub warn: usize,
    pub fail: usize,
    /// "check: reason" for every warning and failure.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestInfo {
    pub name: String,
    pub connections: Vec<u32>,
}

/// One server at one test and connection count, over its repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub test: String,
    pub connections: u32,
    pub server: String,
    /// Requests/s summary, p99, errors and flags, as in the terminal table.
    #[serde(flatten)]
    pub stats: CellStats,
    /// The flags as marks (C ~ E F), and the verify warnings mark W.
    pub flags: String,
    /// The good repetitions' histograms added together.
    pub latency: Option<Spectrum>,
    /// Medians over the repetitions (peak memory: the median of the peaks).
    pub server_cpu_cores: Option<f64>,
    pub requests_per_cpu_s: Option<f64>,
    pub peak_rss_bytes: Option<f64>,
    /// See [`rss_per_connection`].
    pub rss_per_connection: Option<f64>,
}

/// One measurement, as stored.
#[derive(Debug, Clone, Serialize)]
pub struct Repetition {
    pub test: String,
    pub connections: u32,
    pub server: String,
    pub repetition: u32,
    pub ok: bool,
    pub failure: Option<String>,
    pub result: Option<RepetitionFigures>,
}

/// The figures of one good measurement.
#[derive(Debug, Clone, Serialize)]
pub struct RepetitionFigures {
    pub rps: f64,
    pub requests: u64,
    pub errors: BTreeMap<&'static str, u64>,
    pub latency_mean_ns: f64,
    pub latency_p50_ns: f64,
    pub latency_p90_ns: f64,
    pub latency_p99_ns: f64,
    pub latency_p999_ns: f64,
    pub latency_p9999_ns: f64,
    pub latency_max_ns: f64,
    pub client_cpu_s: f64,
    pub achieved_concurrency: f64,
    pub client_bound: bool,
    pub server: Option<ServerUse>,
}

/// Builds the report of a stored run.
pub fn build_report(run: &RunDetail) -> Report {
    let table = run_table(run);
    let mut tests: Vec<TestInfo> = Vec::new();
    for (name, conns) in &table.rows {
        match tests.iter_mut().find(|t| &t.name == name) {
            Some(t) => t.connections.push(*conns),
            None => tests.push(TestInfo {
                name: name.clone(),
                connections: vec![*conns],
            }),
        }
    }
    let servers: Vec<ServerInfo> = run
        .servers
        .iter()
        .map(|s| server_info(s, &run.environment["tools"]))
        .collect();
    let warned: Vec<&str> = servers
        .iter()
        .filter(|s| s.verify.as_ref().is_some_and(|v| v.warn > 0))
        .map(|s| s.label.as_str())
        .collect();

    let mut repetitions = Vec::new();
    let mut histograms: BTreeMap<(String, u32, String), Vec<_>> = BTreeMap::new();
    for m in &run.measurements {
        let server = label(&m.key.server, &m.key.variant);
        let key = (m.key.scenario.clone(), m.key.connections, server.clone());
        let result = (m.status == MeasurementStatus::Ok)
            .then_some(m.result_json.as_deref())
            .flatten()
            .and_then(|j| serde_json::from_str::<LoadResult>(j).ok());
        if result.is_some() {
            if let Some(h) = m.histogram.as_deref().and_then(decode) {
                histograms.entry(key.clone()).or_default().push(h);
            }
        }
        repetitions.push(Repetition {
            test: key.0,
            connections: key.1,
            server,
            repetition: m.key.repetition,
            ok: m.status == MeasurementStatus::Ok,
            failure: m.failure.clone(),
            result: result.map(|r| figures(&r, server_use(&m.samples, r.rps))),
        });
    }

    let mut cells: Vec<Cell> = Vec::new();
    for (test, conns) in &table.rows {
        for server in &table.columns {
            let key = (test.clone(), *conns, server.clone());
            let Some(stats) = table.cells.get(&key) else {
                continue;
            };
            let uses: Vec<ServerUse> = repetitions
                .iter()
                .filter(|r| &r.test == test && r.connections == *conns && &r.server == server)
                .filter_map(|r| r.result.as_ref().and_then(|f| f.server))
                .collect();
            let med = |f: &dyn Fn(&ServerUse) -> Option<f64>| -> Option<f64> {
                summarize(&uses.iter().filter_map(f).collect::<Vec<_>>()).map(|s| s.median)
            };
            let mut flags = stats.flags();
            if warned.contains(&server.as_str()) {
                flags.push(Flag::VerifyWarnings.letter());
            }
            cells.push(Cell {
                test: test.clone(),
                connections: *conns,
                server: server.clone(),
                stats: stats.clone(),
                flags,
                latency: histograms.get(&key).and_then(spectrum),
                server_cpu_cores: med(&|u| Some(u.cpu_cores)),
                requests_per_cpu_s: med(&|u| u.requests_per_cpu_s),
                peak_rss_bytes: med(&|u| Some(u.peak_rss_bytes as f64)),
                rss_per_connection: None,
            });
        }
    }
    fill_rss_per_connection(&mut cells);

    Report {
        format: REPORT_FORMAT,
        run: RunInfo {
            id: run.id,
            suite: run.suite.clone(),
            status: run.status.as_str().to_string(),
            started_at: run.started_at.clone(),
            finished_at: run.finished_at.clone(),
            command: run.command.clone(),
            environment: run.environment.clone(),
            placement: run.placement.clone(),
            suite_toml: run.suite_toml.clone(),
            repetitions_override: run.repetitions,
            work_seed: run.work_seed,
        },
        servers,
        tests,
        columns: table.columns,
        cells,
        repetitions,
    }
}

impl Report {
    /// The cell of `server` at `test` and `connections`.
    pub fn cell(&self, test: &str, connections: u32, server: &str) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.test == test && c.connections == connections && c.server == server)
    }

    /// Requests/s of each good repetition of a cell, for comparisons.
    pub fn rps_values(&self, test: &str, connections: u32, server: &str) -> Vec<f64> {
        self.rep_values(test, connections, server, |f| f.rps)
    }

    /// One figure of each good repetition of a cell.
    pub fn rep_values(
        &self,
        test: &str,
        connections: u32,
        server: &str,
        f: impl Fn(&RepetitionFigures) -> f64,
    ) -> Vec<f64> {
        self.repetitions
            .iter()
            .filter(|r| r.test == test && r.connections == connections && r.server == server)
            .filter_map(|r| r.result.as_ref().map(&f))
            .collect()
    }
}

fn fill_rss_per_connection(cells: &mut [Cell]) {
    let bases: BTreeMap<(String, String), (u32, f64)> = cells
        .iter()
        .filter_map(|c| {
            Some((
                (c.test.clone(), c.server.clone()),
                (c.connections, c.peak_rss_bytes?),
            ))
        })
        .fold(BTreeMap::new(), |mut m, (k, v)| {
            let e = m.entry(k).or_insert(v);
            if v.0 < e.0 {
                *e = v;
            }
            m
        });
    for c in cells.iter_mut() {
        if let (Some(&(bc, brss)), Some(rss)) = (
            bases.get(&(c.test.clone(), c.server.clone())),
            c.peak_rss_bytes,
        ) {
            c.rss_per_connection = rss_per_connection(bc, brss, c.connections, rss);
        }
    }
}

fn figures(r: &LoadResult, server: Option<ServerUse>) -> RepetitionFigures {
    RepetitionFigures {
        rps: r.rps,
        requests: r.requests,
        errors: r
            .errors
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| (k.name(), n))
            .collect(),
        latency_mean_ns: r.latency.mean_ns,
        latency_p50_ns: r.latency.p50_ns,
        latency_p90_ns: r.latency.p90_ns,
        latency_p99_ns: r.latency.p99_ns,
        latency_p999_ns: r.latency.p999_ns,
        latency_p9999_ns: r.latency.p9999_ns,
        latency_max_ns: r.latency.max_ns,
        client_cpu_s: r.client_cpu_s,
        achieved_concurrency: r.achieved_concurrency,
        client_bound: r.verdict.client_bound,
        server,
    }
}

fn server_info(s: &ServerRecord, tools: &serde_json::Value) -> ServerInfo {
    let manifest: Option<ServerManifest> = toml::from_str(&s.manifest_toml).ok();
    let (language, language_min, framework, description) = match &manifest {
        Some(m) => {
            let variant = m.variants.iter().find(|v| v.name == s.variant);
            (
                m.language.clone(),
                m.language_version.clone(),
                if m.framework_version.is_empty() {
                    m.framework.clone()
                } else {
                    format!("{} {}", m.framework, m.framework_version)
                },
                variant.map_or(m.description.clone(), |v| v.description.clone()),
            )
        }
        None => Default::default(),
    };
    let toolchain = tool_for_language(&language)
        .and_then(|t| tools[t].as_str())
        .and_then(version_in);
    ServerInfo {
        label: label(&s.server, &s.variant),
        language,
        language_min,
        toolchain,
        framework,
        description,
        build_status: s.build_status.as_str().to_string(),
        build_s: s.variant.is_empty().then_some(s.build_s),
        artefact_bytes: s.artefact_bytes,
        ready_s: s.ready_s,
        verify: s.verify_json.as_deref().map(verify_counts),
        excluded_reason: s.excluded_reason.clone(),
    }
}

impl ServerInfo {
    /// "Go 1.26.8 (needs 1.22+)": the version that built and ran the server
    /// this time, and the manifest's minimum, which alone would mislead.
    pub fn language_shown(&self) -> String {
        match (&self.toolchain, self.language_min.is_empty()) {
            (Some(t), true) => format!("{} {t}", self.language),
            (Some(t), false) => format!("{} {t} (needs {}+)", self.language, self.language_min),
            (None, false) => format!("{} {}+", self.language, self.language_min),
            (None, true) => self.language.clone(),
        }
    }
}

/// The first version number in a tool's `--version` line:
/// "go version go1.26.8 linux/amd64" → "1.26.8".
fn version_in(line: &str) -> Option<String> {
    line.split_whitespace().find_map(|token| {
        let t = token.trim_matches(|c: char| "\"'()".contains(c));
        let t = t
            .strip_prefix("go")
            .or_else(|| t.strip_prefix('v'))
            .unwrap_or(t);
        let end = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let v = t[..end].trim_end_matches('.');
        (v.contains('.') && v.starts_with(|c: char| c.is_ascii_digit())).then(|| v.to_string())
    })
}

fn verify_counts(json: &str) -> VerifyCounts {
    let mut v = VerifyCounts::default();
    let parsed: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    for check in parsed["checks"].as_array().into_iter().flatten() {
        let name = check["name"].as_str().unwrap_or("?");
        let reason = check["reason"].as_str().unwrap_or("");
        match check["status"].as_str() {
            Some("pass") => v.pass += 1,
            Some("warn") => {
                v.warn += 1;
                v.notes.push(format!("{name} (warning): {reason}"));
            }
            _ => {
                v.fail += 1;
                v.notes.push(format!("{name} (failed): {reason}"));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_toolchain_version_comes_from_the_tools_own_line() {
        for (line, v) in [
            ("go version go1.26.8 linux/amd64", "1.26.8"),
            ("rustc 1.95.0 (59807616e 2026-04-14)", "1.95.0"),
            ("openjdk version \"17.0.15\" 2025-04-15", "17.0.15"),
            ("v20.20.2", "20.20.2"),
            ("Python 3.11.7", "3.11.7"),
            ("gcc (Debian 12.2.0-14+deb12u1) 12.2.0", "12.2.0"),
        ] {
            assert_eq!(version_in(line).as_deref(), Some(v), "{line}");
        }
        assert_eq!(version_in("no version here 7"), None);
    }

    #[test]
    fn the_language_shows_the_version_used_and_the_minimum() {
        let tools = serde_json::json!({ "go": "go version go1.26.8 linux/amd64" });
        let record = |manifest: &str| ServerRecord {
            server: "g".into(),
            variant: String::new(),
            manifest_toml: manifest.to_string(),
            build_status: netbench_suite::store::BuildStatus::Ok,
            build_s: 1.0,
            artefact_bytes: None,
            ready_s: None,
            verify_json: None,
            excluded_reason: None,
        };
        let go = "name = \"g\"\nlanguage = \"Go\"\nlanguage_version = \"1.22\"\n\
                  framework = \"net/http\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\n";
        let info = server_info(&record(go), &tools);
        assert_eq!(info.toolchain.as_deref(), Some("1.26.8"));
        assert_eq!(info.language_shown(), "Go 1.26.8 (needs 1.22+)");
        let info = server_info(&record(go), &serde_json::Value::Null);
        assert_eq!(info.language_shown(), "Go 1.22+");
    }

    #[test]
    fn verify_warnings_and_failures_are_counted_with_reasons() {
        let v = verify_counts(
            r#"{"seed":1,"checks":[
                {"name":"blank","status":"pass","reason":"ok"},
                {"name":"date","status":"warn","reason":"no Date header"},
                {"name":"work","status":"fail","reason":"wrong total"}]}"#,
        );
        assert_eq!((v.pass, v.warn, v.fail), (1, 1, 1));
        assert_eq!(
            v.notes,
            [
                "date (warning): no Date header",
                "work (failed): wrong total"
            ]
        );
    }

    fn cell(connections: u32, rss: Option<f64>) -> Cell {
        Cell {
            test: "blank".into(),
            connections,
            server: "s".into(),
            stats: CellStats::default(),
            flags: String::new(),
            latency: None,
            server_cpu_cores: None,
            requests_per_cpu_s: None,
            peak_rss_bytes: rss,
            rss_per_connection: None,
        }
    }

    #[test]
    fn memory_per_connection_is_measured_from_the_smallest_count() {
        let mut cells = [
            cell(100, Some(20e6)),
            cell(1, Some(10e6)),
            cell(10_000, Some(1_009e6 + 10e6)),
            cell(50, None),
        ];
        fill_rss_per_connection(&mut cells);
        let per: Vec<Option<f64>> = cells.iter().map(|c| c.rss_per_connection).collect();
        assert_eq!(per[1], None, "the smallest count is the base");
        assert!((per[0].unwrap() - 10e6 / 99.0).abs() < 1e-6);
        assert!((per[2].unwrap() - 1_009e6 / 9_999.0).abs() < 1e-6);
        assert_eq!(per[3], None);
    }
}
