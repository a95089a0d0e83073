//! The report's content, computed once from a stored run and nothing else:
//! who took part and how they were built, every repetition's figures, and per
//! cell the summary, the latency spectrum and what the server used. The HTML,
//! Markdown, CSV and JSON writers only lay it out.

use std::collections::BTreeMap;

use netbench_engine::LoadResult;
use netbench_records::{MeasurementStatus, RunDetail, Sample, ScenarioRecord, ServerRecord};
use netbench_records::{Model, NetworkPath, Protocol, Tier};
use serde::{Serialize, Serializer};

use crate::flag::Flag;
use crate::kinds::KindSections;
use crate::resources::{peak_rss, rss_per_connection, server_use, ServerUse};
use crate::spectrum::{decode, spectrum, Spectrum};
use crate::startup::{start_up, StartUp};
use crate::stats::summarize;
use crate::suite_table::{label, run_table, CellStats, RunTable};
use netbench_records::facts::Facts;

pub(crate) mod rows;
pub(crate) mod section;
mod sections;

pub use rows::{PairedRatio, Precision, RowMethod, RowRanking, TwinVerdict};

/// The version of the JSON report's layout; bumped on any breaking change
/// (2: the figures normalised by the machine-speed control left the cells,
/// which carry intervals over rounds instead; schema/report.v2.schema.json).
pub const REPORT_FORMAT: &str = "netbench-report/2";

/// Everything a report shows about one run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub format: &'static str,
    pub run: RunInfo,
    /// In column order.
    pub servers: Vec<ServerInfo>,
    /// Tests in the suite's order, each with its connection counts.
    pub tests: Vec<TestInfo>,
    /// Server labels in column order: by model (in the order of
    /// [`Model::ALL`], unknown last), then by label.
    pub columns: Vec<String>,
    /// The run's scenarios as it recorded them (not in the JSON: `tests`
    /// and `kinds` carry what a reader needs of them).
    #[serde(skip)]
    pub scenarios: Vec<ScenarioRecord>,
    pub cells: Vec<Cell>,
    /// Each throughput row's ranking (test and connections, in the table's
    /// order): rank order, paired ratios of neighbours, A/A twins, and
    /// client-bound leaders with the rows that rank them instead.
    pub rows: Vec<RowRanking>,
    /// How many cells reached ±5% and what the twins did: the summary line.
    pub precision: Precision,
    pub repetitions: Vec<Repetition>,
    /// The rows of the kinds that are not throughput (idle, storm,
    /// rate-sweep, fixed-rate) and short-lived beside keep-alive; left out
    /// of the JSON when the run has none.
    #[serde(skip_serializing_if = "KindSections::is_empty")]
    pub kinds: KindSections,
    /// How the cells got their server process, and each server's start-up
    /// and warm-up (issue 28).
    pub startup: StartUp,
    /// Each server's cells over TLS, HTTP/2, h2c and gRPC against its own
    /// HTTP/1.1 ones (issue 32); left out of the JSON when the run has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub protocols: Vec<crate::protocols::ProtocolRow>,
    /// Each hostile scenario's servers × attacks, ranked by resilience
    /// (issue 33); left out of the JSON when the run has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hostile: Vec<crate::hostile::HostileTable>,
    /// Each server's HTTP/1.1 conformance score and failed cases (issue
    /// 33), best first; left out of the JSON when no server was probed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conformance: Vec<crate::conformance::ConformanceRow>,
    /// What each resident server did while it waited its turn, and its
    /// crashes (issue 43); left out of the JSON when the run's servers were
    /// not resident.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resident: Vec<crate::resident::ResidentRow>,
    /// The sections built as data (`sections/`), in the order every view
    /// writes them; not in the JSON, whose typed fields carry their figures.
    #[serde(skip)]
    pub sections: Vec<section::Section>,
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
    /// Lines under the throughput table: the back end the run started, and
    /// the servers that do not offer an optional part it measures.
    pub notes: Vec<String>,
    /// Measurements stored, and how many of them failed (every kind).
    pub measurements: usize,
    pub failed_measurements: usize,
    /// The run's median machine-speed probe on the server's CPUs
    /// (nanoseconds), the reference the normalised figures are scaled to;
    /// None for a run without the control.
    pub control_probe_ns: Option<f64>,
    /// The client's I/O backend in the run's good measurements: "io_uring",
    /// "epoll", or both with their counts, and why io_uring fell back where
    /// it did; None when nothing was measured. Compare flags a change.
    pub client_io: Option<String>,
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
    /// The framework as shown: its name and version ("net/http stdlib").
    pub framework: String,
    pub framework_name: String,
    /// From the manifest ("" if unsaid).
    pub framework_version: String,
    /// How it spreads connections over threads and processes: the variant's
    /// own model if it sets one, else the manifest's. None when the stored
    /// manifest names none (stored by a netbench before models) or one this
    /// netbench does not know.
    #[serde(serialize_with = "model_name")]
    pub model: Option<Model>,
    /// `tuned` for a variant with documented production tuning, else
    /// `default`.
    #[serde(serialize_with = "tier_name")]
    pub tier: Tier,
    /// The framework's home page, from the manifest ("" if unsaid).
    pub website: String,
    pub description: String,
    pub build_status: String,
    /// How long the build of the artefact in use took (this run's, or the
    /// earlier one reused while the sources were unchanged); None for a
    /// variant, which shares its server's build.
    pub build_s: Option<f64>,
    pub artefact_bytes: Option<u64>,
    /// From start to the first good answer.
    pub ready_s: Option<f64>,
    /// The largest RSS of the server's process tree in any sample stored
    /// with any of its measurements in this run; None without samples (a
    /// server whose every measurement failed).
    pub peak_rss_bytes: Option<u64>,
    /// The C-level allocator it ran with, checked at start (`glibc`,
    /// `jemalloc`, `mimalloc`, `tcmalloc`); None for a runtime's own.
    pub allocator: Option<String>,
    pub verify: Option<VerifyCounts>,
    pub excluded_reason: Option<String>,
}

/// Each server's peak RSS over all its measurements' samples (given as
/// server label and samples), for those with any.
fn peaks_by_server<'a>(
    measurements: impl Iterator<Item = (String, &'a [Sample])>,
) -> BTreeMap<String, u64> {
    let mut peaks: BTreeMap<String, u64> = BTreeMap::new();
    for (server, samples) in measurements {
        if let Some(p) = peak_rss(samples) {
            let e = peaks.entry(server).or_default();
            *e = (*e).max(p);
        }
    }
    peaks
}

/// The model as a manifest writes it, or null.
fn model_name<S: Serializer>(model: &Option<Model>, s: S) -> Result<S::Ok, S::Error> {
    match model {
        Some(m) => s.serialize_str(m.as_str()),
        None => s.serialize_none(),
    }
}

fn tier_name<S: Serializer>(tier: &Tier, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(tier_str(*tier))
}

/// The tier as a manifest writes it.
pub(crate) fn tier_str(tier: Tier) -> &'static str {
    match tier {
        Tier::Default => "default",
        Tier::Tuned => "tuned",
    }
}

/// Where a server of `model` goes in the column order: the models in
/// [`Model::ALL`]'s order, unknown last.
pub(crate) fn model_rank(model: Option<Model>) -> usize {
    model.map_or(Model::ALL.len(), |m| {
        Model::ALL
            .iter()
            .position(|&x| x == m)
            .unwrap_or(Model::ALL.len())
    })
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
    /// What carried its requests (h1 for runs stored before contract 1.5).
    pub protocol: Protocol,
    /// HTTP/2 streams in flight per connection (1 otherwise).
    pub streams: u32,
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
    /// The most threads the server's process tree had at once (median over
    /// the repetitions).
    pub peak_threads: Option<f64>,
    /// Bytes on the wire per answer, as the client read them while
    /// measuring (median over the repetitions; None for runs stored before
    /// the engine counted them).
    pub bytes_per_answer: Option<f64>,
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
    /// The engine's figures; None for a failed repetition and for an idle
    /// one (whose result is not a load run).
    pub result: Option<RepetitionFigures>,
    /// The scenario's kind ("throughput", "idle", ...).
    pub kind: &'static str,
    /// What the kind measured beyond the engine's figures, tagged by kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facts: Option<Facts>,
    /// Where the server was on the network: loopback or a namespace over a
    /// veth pair, its addresses, MTU and bandwidth (absent for a failed
    /// repetition and for runs stored before placements).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkPath>,
    /// The warm phase before the measured window when the suite warms until
    /// steady: fresh or reused process, time to first answer, the curve of
    /// window throughputs, when it settled and its class (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<netbench_records::WarmUp>,
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
    /// Bytes read while measuring over the answers counted: head and body
    /// as the server sent them (coded, when it compressed).
    pub bytes_per_answer: Option<f64>,
    pub server: Option<ServerUse>,
    /// The machine-speed control around this repetition: nanoseconds of the
    /// fixed CPU probe on the server's CPUs (larger is a slower machine).
    pub probe_server_ns: Option<f64>,
    /// The loopback control: nanoseconds of the fixed exchange between the
    /// server's CPUs and the client's (larger is a slower machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_loopback_ns: Option<f64>,
}

/// Builds the report of a stored run.
pub fn build_report(run: &RunDetail) -> Report {
    let table = run_table(run);
    let mut tests: Vec<TestInfo> = Vec::new();
    for (name, conns) in &table.rows {
        match tests.iter_mut().find(|t| &t.name == name) {
            Some(t) => t.connections.push(*conns),
            None => {
                let scenario = run.scenarios.iter().find(|s| &s.name == name);
                tests.push(TestInfo {
                    name: name.clone(),
                    connections: vec![*conns],
                    protocol: scenario.map_or(Protocol::H1, |s| s.protocol),
                    streams: scenario.map_or(1, |s| s.streams),
                })
            }
        }
    }
    let peaks = peaks_by_server(
        run.measurements
            .iter()
            .map(|m| (label(&m.key.server, &m.key.variant), m.samples.as_slice())),
    );
    let mut servers: Vec<ServerInfo> = run
        .servers
        .iter()
        .map(|s| {
            let mut info = server_info(s);
            info.peak_rss_bytes = peaks.get(&info.label).copied();
            info
        })
        .collect();
    servers.sort_by(|a, b| (model_rank(a.model), &a.label).cmp(&(model_rank(b.model), &b.label)));
    let mut columns = table.columns.clone();
    let rank = |label: &String| {
        model_rank(
            servers
                .iter()
                .find(|s| &s.label == label)
                .and_then(|s| s.model),
        )
    };
    columns.sort_by(|a, b| (rank(a), a).cmp(&(rank(b), b)));
    let warned: Vec<&str> = servers
        .iter()
        .filter(|s| s.verify.as_ref().is_some_and(|v| v.warn > 0))
        .map(|s| s.label.as_str())
        .collect();

    let scenarios = crate::kinds::scenarios(run);
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
            result: result.map(|r| RepetitionFigures {
                probe_server_ns: m.noise.map(|n| n.probe_server_ns),
                probe_loopback_ns: m.noise.and_then(|n| n.probe_loopback_ns),
                ..figures(&r, server_use(&m.samples, r.rps))
            }),
            kind: crate::kinds::kind_of(m, &scenarios),
            facts: m.facts.clone(),
            network: m.network.clone(),
            steady_state: m.warmup.clone(),
        });
    }

    let mut cells: Vec<Cell> = Vec::new();
    for (test, conns) in &table.rows {
        for server in &columns {
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
            let per_answer: Vec<f64> = repetitions
                .iter()
                .filter(|r| &r.test == test && r.connections == *conns && &r.server == server)
                .filter_map(|r| r.result.as_ref().and_then(|f| f.bytes_per_answer))
                .collect();
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
                peak_threads: med(&|u| Some(f64::from(u.peak_threads))),
                bytes_per_answer: summarize(&per_answer).map(|s| s.median),
            });
        }
    }
    fill_rss_per_connection(&mut cells);
    let protocols = crate::protocols::protocol_rows(&run.scenarios, &columns, &cells);
    let kinds = crate::kinds::build_kinds(run, &columns);
    let startup = start_up(run, &columns, &table.rows);
    let precision = Precision::of(&table.cells, &table.rankings);
    // The rows that rank client-bound leaders: server CPU per request at a
    // fixed rate.
    let mut fixed: Vec<String> = Vec::new();
    for r in &kinds.fixed_rate {
        let name = format!("{} c={}", r.test, r.connections);
        if !fixed.contains(&name) {
            fixed.push(name);
        }
    }
    let mut rows = table.rankings.clone();
    for row in rows
        .iter_mut()
        .filter(|r| !r.client_bound_leaders.is_empty())
    {
        row.ranked_by = fixed.clone();
    }

    let mut report = Report {
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
            notes: crate::offers::notes(run)
                .into_iter()
                .chain(crate::network::notes(run))
                .collect(),
            measurements: run.measurements.len(),
            failed_measurements: run
                .measurements
                .iter()
                .filter(|m| m.status != MeasurementStatus::Ok)
                .count(),
            control_probe_ns: crate::suite_table::control_reference(run),
            client_io: client_io(run),
        },
        servers,
        tests,
        columns,
        scenarios: run.scenarios.clone(),
        kinds,
        cells,
        rows,
        precision,
        repetitions,
        startup,
        protocols,
        hostile: crate::hostile::hostile_tables(run),
        conformance: crate::conformance::conformance_rows(run),
        resident: Vec::new(),
        sections: Vec::new(),
    };
    report.resident = crate::resident::resident_rows(run, &report.columns);
    report.sections = sections::build(&report);
    report
}

impl Report {
    /// The placement table, when the run measured cells in two places.
    pub(crate) fn placements(&self) -> Option<crate::network::PlacementTable> {
        let tests: Vec<(String, u32)> = self
            .tests
            .iter()
            .flat_map(|t| t.connections.iter().map(|&c| (t.name.clone(), c)))
            .collect();
        crate::network::placement_table(
            &self.scenarios,
            &tests,
            &self.columns,
            |test, c, server| self.cell(test, c, server).map(|cell| &cell.stats),
        )
    }

    /// The throughput cells as a table: rows in the suite's order, columns
    /// in the report's (by model, then name).
    pub fn table(&self) -> RunTable {
        RunTable {
            rows: self
                .tests
                .iter()
                .flat_map(|t| t.connections.iter().map(|&c| (t.name.clone(), c)))
                .collect(),
            columns: self.columns.clone(),
            cells: self
                .cells
                .iter()
                .map(|c| {
                    (
                        (c.test.clone(), c.connections, c.server.clone()),
                        c.stats.clone(),
                    )
                })
                .collect(),
            rankings: self.rows.clone(),
        }
    }

    /// The ranking of one row.
    pub fn row(&self, test: &str, connections: u32) -> Option<&RowRanking> {
        self.rows
            .iter()
            .find(|r| r.test == test && r.connections == connections)
    }

    /// What carried a test's requests: its scenario's protocol, HTTP/1.1
    /// for a test the run's scenarios do not name (stored before them).
    pub fn protocol_of(&self, test: &str) -> Protocol {
        self.scenarios
            .iter()
            .find(|s| s.name == test)
            .map_or(Protocol::H1, |s| s.protocol)
    }

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
        bytes_per_answer: (r.measured_bytes_read > 0 && r.requests > 0)
            .then(|| r.measured_bytes_read as f64 / r.requests as f64),
        server,
        probe_server_ns: None,
        probe_loopback_ns: None,
    }
}

/// What the report shows of a server variant: the facts the run recorded
/// of it, its build and its verification.
fn server_info(s: &ServerRecord) -> ServerInfo {
    let f = &s.facts;
    ServerInfo {
        label: label(&s.server, &s.variant),
        language_min: f.language_version.clone(),
        language: f.language.clone(),
        toolchain: f.toolchain.clone(),
        framework: if f.framework_version.is_empty() {
            f.framework.clone()
        } else {
            format!("{} {}", f.framework, f.framework_version)
        },
        framework_name: f.framework.clone(),
        framework_version: f.framework_version.clone(),
        model: f.model,
        tier: f.tier,
        website: f.website.clone(),
        description: f.description.clone(),
        build_status: s.build_status.as_str().to_string(),
        build_s: s.variant.is_empty().then_some(s.build_s),
        artefact_bytes: s.artefact_bytes,
        ready_s: s.ready_s,
        peak_rss_bytes: None,
        allocator: s.allocator.clone(),
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

/// What `RunInfo::client_io` says: the backend of each good measurement that
/// ran the engine, counted. Results stored before the field existed read as
/// epoll, which is what measured them.
fn client_io(run: &RunDetail) -> Option<String> {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut fallback = None;
    for m in &run.measurements {
        let Some(r) = (m.status == MeasurementStatus::Ok)
            .then_some(m.result_json.as_deref())
            .flatten()
            .and_then(|j| serde_json::from_str::<LoadResult>(j).ok())
        else {
            continue;
        };
        *counts.entry(r.io.name()).or_default() += 1;
        fallback = fallback.or(r.io_fallback);
    }
    let mut text = match counts.len() {
        0 => return None,
        1 => counts.keys().next().expect("one").to_string(),
        _ => counts
            .iter()
            .map(|(io, n)| format!("{io} in {n}"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    if let Some(why) = fallback {
        text.push_str(&format!(" (io_uring refused: {why})"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netbench_records::{fixtures, ServerFacts};

    fn record(server: &str, variant: &str, facts: ServerFacts) -> ServerRecord {
        ServerRecord {
            facts,
            ..fixtures::server(server, variant)
        }
    }

    #[test]
    fn the_client_backend_is_counted_from_the_stored_results() {
        let mut run = fixtures::run(1, "t");
        assert_eq!(client_io(&run), None, "nothing measured");
        let with_io = |io: &str, fallback: Option<&str>| {
            let mut m = fixtures::ok(fixtures::key("s", "blank", 100, 1), 1000.0);
            let mut r: serde_json::Value =
                serde_json::from_str(m.result_json.as_deref().unwrap()).unwrap();
            r["io"] = io.into();
            r["io_fallback"] = fallback.into();
            m.result_json = Some(r.to_string());
            m
        };
        // Stored before the field: measured on epoll.
        run.measurements = vec![fixtures::ok(fixtures::key("s", "blank", 100, 1), 1000.0)];
        assert_eq!(client_io(&run).as_deref(), Some("epoll"));
        run.measurements = vec![with_io("Uring", None), with_io("Uring", None)];
        assert_eq!(client_io(&run).as_deref(), Some("io_uring"));
        run.measurements
            .push(with_io("Epoll", Some("kernel.io_uring_disabled is 2")));
        assert_eq!(
            client_io(&run).as_deref(),
            Some("epoll in 1, io_uring in 2 (io_uring refused: kernel.io_uring_disabled is 2)")
        );
    }

    #[test]
    fn bytes_per_answer_are_the_measured_bytes_over_the_answers() {
        let mut run = fixtures::run(1, "t");
        run.servers = vec![fixtures::server("s", "")];
        let with_bytes = |rep: u32, measured: u64| {
            let mut m = fixtures::ok(fixtures::key("s", "blank", 100, rep), 1000.0);
            let mut r: serde_json::Value =
                serde_json::from_str(m.result_json.as_deref().unwrap()).unwrap();
            let requests = r["requests"].as_u64().unwrap();
            r["bytes_read"] = (measured * requests * 2).into();
            r["measured_bytes_read"] = (measured * requests).into();
            m.result_json = Some(r.to_string());
            m
        };
        run.measurements = vec![with_bytes(1, 150), with_bytes(2, 170), with_bytes(3, 160)];
        let report = build_report(&run);
        let per = |rep: usize| {
            report.repetitions[rep]
                .result
                .as_ref()
                .unwrap()
                .bytes_per_answer
        };
        assert_eq!((per(0), per(1)), (Some(150.0), Some(170.0)));
        assert_eq!(report.cells[0].bytes_per_answer, Some(160.0), "the median");
        // Stored before the engine counted them: none, not zero.
        run.measurements = vec![fixtures::ok(fixtures::key("s", "blank", 100, 1), 1000.0)];
        assert_eq!(build_report(&run).cells[0].bytes_per_answer, None);
    }

    #[test]
    fn the_language_shows_the_version_used_and_the_minimum() {
        let mut go = ServerFacts {
            language: "Go".into(),
            language_version: "1.22".into(),
            toolchain: Some("1.26.8".into()),
            ..ServerFacts::default()
        };
        let info = server_info(&record("g", "", go.clone()));
        assert_eq!(info.language_shown(), "Go 1.26.8 (needs 1.22+)");
        go.toolchain = None;
        assert_eq!(
            server_info(&record("g", "", go)).language_shown(),
            "Go 1.22+"
        );
    }

    #[test]
    fn model_tier_website_and_framework_come_from_the_recorded_facts() {
        let facts = ServerFacts {
            language: "Rust".into(),
            framework: "axum".into(),
            framework_version: "0.8".into(),
            model: Some(Model::WorkStealing),
            tier: Tier::Tuned,
            website: "https://github.com/tokio-rs/axum".into(),
            description: "tokio".into(),
            ..ServerFacts::default()
        };
        let tuned = server_info(&record("z", "tuned", facts));
        assert_eq!(tuned.label, "z:tuned");
        assert_eq!(
            (
                tuned.framework.as_str(),
                tuned.framework_name.as_str(),
                tuned.framework_version.as_str()
            ),
            ("axum 0.8", "axum", "0.8")
        );
        let json = serde_json::to_value(&tuned).unwrap();
        assert_eq!(json["model"], "work-stealing");
        assert_eq!(json["tier"], "tuned");
        assert_eq!(json["framework_version"], "0.8");
        assert_eq!(json["peak_rss_bytes"], serde_json::Value::Null);
        // A server whose manifest named no model this netbench knows.
        let unknown = server_info(&record("g", "", ServerFacts::default()));
        let json = serde_json::to_value(&unknown).unwrap();
        assert_eq!(json["model"], serde_json::Value::Null);
        assert_eq!(json["tier"], "default");
    }

    fn run_of(servers: Vec<ServerRecord>) -> RunDetail {
        RunDetail {
            events: Vec::new(),
            servers,
            ..fixtures::run(1, "t")
        }
    }

    fn samples(rss: &[u64]) -> Vec<Sample> {
        rss.iter()
            .map(|&rss_bytes| Sample {
                rss_bytes,
                ..Sample::default()
            })
            .collect()
    }

    #[test]
    fn peak_memory_is_the_largest_sample_over_all_the_servers_cells() {
        let measured = [
            ("z", samples(&[10, 30, 20])),
            // One sample is enough (a window is not needed); a sample taken
            // after the server was gone reads 0.
            ("z", samples(&[25])),
            ("z", samples(&[40, 0])),
            ("z:tuned", samples(&[])),
            ("y", samples(&[0])),
            ("x", samples(&[5])),
        ];
        let peaks = peaks_by_server(measured.iter().map(|(l, s)| (l.to_string(), s.as_slice())));
        assert_eq!(
            peaks.into_iter().collect::<Vec<_>>(),
            [("x".to_string(), 5), ("z".to_string(), 40)]
        );
    }

    #[test]
    fn servers_and_columns_are_ordered_by_model_then_name() {
        let of = |model: Option<Model>, tier: Tier| ServerFacts {
            model,
            tier,
            ..ServerFacts::default()
        };
        let servers = vec![
            record("a-old", "", of(None, Tier::Default)),
            record("b-loop", "", of(Some(Model::EventLoop), Tier::Default)),
            record("c-pool", "", of(Some(Model::ThreadPool), Tier::Default)),
            record("z", "", of(Some(Model::WorkStealing), Tier::Default)),
            record(
                "z",
                "current-thread",
                of(Some(Model::EventLoop), Tier::Default),
            ),
            record("z", "tuned", of(Some(Model::WorkStealing), Tier::Tuned)),
        ];
        let r = build_report(&run_of(servers));
        let order = [
            "c-pool",
            "b-loop",
            "z:current-thread",
            "z",
            "z:tuned",
            "a-old",
        ];
        assert_eq!(r.columns, order);
        let labels: Vec<&str> = r.servers.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, order);

        // Colours: a shade of the model's own hue each, unknown in grey.
        let colors = crate::palette::swatches(&r);
        let of: Vec<(&str, Option<Model>)> =
            colors.iter().map(|s| (s.label.as_str(), s.model)).collect();
        assert_eq!(
            of,
            [
                ("c-pool", Some(Model::ThreadPool)),
                ("b-loop", Some(Model::EventLoop)),
                ("z:current-thread", Some(Model::EventLoop)),
                ("z", Some(Model::WorkStealing)),
                ("z:tuned", Some(Model::WorkStealing)),
                ("a-old", None),
            ]
        );
        assert_ne!(colors[1].color, colors[2].color);
        assert_ne!(colors[3].color, colors[4].color);
        assert_eq!(colors[5].color, crate::palette::model_color(None));
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
            peak_threads: None,
            bytes_per_answer: None,
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
