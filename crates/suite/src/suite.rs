//! Suite files (suites/*.toml): which servers and variants, which scenarios
//! at which connection counts, how many repetitions, CPU placement and
//! cool-down. Parsed and checked here into a plain `Suite`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use netbench_engine::IoBackend;
use netbench_records::Protocol;
use serde::Deserialize;

use crate::adaptive::Adaptive;
use crate::kinds::{Kind, RawKind};
use crate::netns::{parse_bandwidth, Bandwidth, NetPlacement};

/// Repetitions given in place of a suite file's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Repetitions {
    Count(u32),
    Auto(Adaptive),
}

/// What a scenario sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Endpoint {
    /// `GET /blank`, answer `OK` checked.
    Blank,
    /// `POST /work` with generated documents, every answer checked.
    Work,
    /// `GET /echo/<text>`, answer checked.
    Echo,
    /// `GET /db?id=N` over a pool of random ids, each row checked (the
    /// contract's optional `db` part: the run starts a PostgreSQL).
    Db,
    /// `GET /db/list?from=N` of the default count, each list checked.
    DbList,
    /// `GET /ws` upgraded, then messages echoed and checked (the optional
    /// `ws` part).
    Ws,
    /// `GET /static/14k`, the file checked byte for byte (the optional
    /// `static` part).
    Static,
    /// `GET /static/1m`, the same.
    #[serde(rename = "static-1m")]
    Static1m,
    /// `POST /upload` of bodies from 1 KiB to 1 MiB, each answer's length
    /// and SHA-256 checked (the optional `upload` part).
    Upload,
    /// `POST /work` asking for gzip, each answer decoded and checked (the
    /// optional `json-comp` part).
    JsonComp,
    /// `GET /fortunes`, each page's table checked (the optional `fortunes`
    /// part: the run starts a PostgreSQL).
    Fortunes,
    /// `POST /work` allowing `br, gzip`: brotli from servers that have it,
    /// gzip from the others, each answer decoded and checked (`json-comp`).
    JsonCompBr,
    /// `GET /queries?queries=20`, each row checked against the seeded
    /// World table (the optional `queries` part).
    Queries,
    /// `GET /updates?queries=20`, each row checked for shape and range; the
    /// table is put back after each cell (the optional `updates` part).
    Updates,
    /// `GET /app?page=K` as a browser per connection: a session made, kept
    /// for 20 gzip pages, each checked, then ended by a logout (the
    /// optional `app` part).
    App,
    /// `work` with a browser's 16 further header fields in every request
    /// (`netbench_contract::BROWSER_HEADERS`): what parsing every field
    /// costs a server against parsing only those it needs.
    WorkBrowser,
}

impl Endpoint {
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Blank => "blank",
            Endpoint::Work => "work",
            Endpoint::Echo => "echo",
            Endpoint::Db => "db",
            Endpoint::DbList => "db-list",
            Endpoint::Ws => "ws",
            Endpoint::Static => "static",
            Endpoint::Static1m => "static-1m",
            Endpoint::Upload => "upload",
            Endpoint::JsonComp => "json-comp",
            Endpoint::Fortunes => "fortunes",
            Endpoint::JsonCompBr => "json-comp-br",
            Endpoint::Queries => "queries",
            Endpoint::Updates => "updates",
            Endpoint::App => "app",
            Endpoint::WorkBrowser => "work-browser",
        }
    }

    /// The optional contract part a server must offer for this endpoint.
    pub fn needs(self) -> Option<crate::manifest::Offer> {
        use crate::manifest::Offer;
        match self {
            Endpoint::Blank | Endpoint::Work | Endpoint::Echo | Endpoint::WorkBrowser => None,
            Endpoint::Db | Endpoint::DbList => Some(Offer::Db),
            Endpoint::Ws => Some(Offer::Ws),
            Endpoint::Static | Endpoint::Static1m => Some(Offer::Static),
            Endpoint::Upload => Some(Offer::Upload),
            Endpoint::JsonComp | Endpoint::JsonCompBr => Some(Offer::JsonComp),
            Endpoint::Fortunes => Some(Offer::Fortunes),
            Endpoint::Queries => Some(Offer::Queries),
            Endpoint::Updates => Some(Offer::Updates),
            Endpoint::App => Some(Offer::App),
        }
    }

    /// Whether its server reads the run's PostgreSQL.
    pub fn uses_database(self) -> bool {
        matches!(
            self,
            Endpoint::Db
                | Endpoint::DbList
                | Endpoint::Fortunes
                | Endpoint::Queries
                | Endpoint::Updates
        )
    }
}

/// When a measurement ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Duration(Duration),
    Requests(u64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub endpoint: Endpoint,
    pub connections: Vec<u32>,
    pub length: Length,
    pub warmup: Duration,
    pub keepalive: bool,
    /// Distinct generated documents for the work endpoint.
    pub work_documents: usize,
    /// What the scenario measures (`kind = "idle"`, ...; throughput when
    /// not given).
    pub kind: Kind,
    /// Where its server runs: loopback (the default) or a network namespace
    /// over a veth pair (`placement = "netns"`).
    pub placement: NetPlacement,
    /// With `placement = "netns"` only: tbf's rate on both ends of the veth
    /// pair; None leaves it unshaped.
    pub bandwidth: Option<Bandwidth>,
    /// Server selectors that narrow the suite's for this scenario (a
    /// variant is measured here when it matches both, as `selects` says);
    /// None measures every server of the suite. So a study of one axis (the
    /// allocators) can ask its variants for one scenario alone.
    pub servers: Option<Vec<String>>,
    /// What carries its requests (contract 1.5): `protocol = "tls"`, ...;
    /// HTTP/1.1 on cleartext when not given.
    pub protocol: Protocol,
    /// HTTP/2's streams per connection (`streams = 10`; 1 when not given).
    pub streams: u32,
    /// Over TLS: resume sessions on new connections (`tls_resume = true`;
    /// off, every connection makes a full handshake).
    pub tls_resume: bool,
}

impl Scenario {
    /// Whether its requests ask for keep-alive: not with `keepalive =
    /// false`, keep-alive off (short-lived with K = 1) or a storm, whose
    /// clients send one request each.
    pub fn sends_keepalive(&self) -> bool {
        self.keepalive
            && !matches!(
                self.kind,
                Kind::Storm
                    | Kind::ShortLived {
                        requests_per_connection: 1
                    }
            )
    }

    /// The connection count of each of the scenario's cells: one cell per
    /// count, or one cell at the largest for a kind that steps through them
    /// all on one server (idle).
    pub fn cell_counts(&self) -> Vec<u32> {
        if self.kind.one_cell_for_all_counts() {
            self.connections
                .iter()
                .max()
                .map(|&m| vec![m])
                .unwrap_or_default()
        } else {
            self.connections.clone()
        }
    }
}

/// Which CPUs the server and the client run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Disjoint halves of the CPUs this process may use (the server gets the
    /// first half); no pinning on a single CPU.
    Auto,
    /// Explicit CPU lists.
    Pinned {
        server: Vec<usize>,
        client: Vec<usize>,
    },
    /// No pinning at all.
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub name: String,
    pub description: String,
    /// Server selectors: a name, a glob (`*`, `go-*`), or `name:variant`.
    pub servers: Vec<String>,
    pub scenarios: Vec<Scenario>,
    /// Rounds every cell gets (with adaptive repetitions, the first rounds).
    pub repetitions: u32,
    /// Set by `repetitions = "auto"`: more rounds for the cells still too
    /// noisy to rank, within a budget.
    pub adaptive: Option<Adaptive>,
    pub cooldown: Duration,
    pub placement: Placement,
    /// A measurement still running after this is cancelled and fails.
    pub cell_timeout: Duration,
    /// The longest to wait before a cell for other processes to leave the
    /// CPUs alone (0: look once, never wait).
    pub quiet_wait: Duration,
    /// How servers are warmed before each measured window, and whether a
    /// process serves one cell or a server's round (`[warmup]`, warm.rs).
    pub warm: crate::warm::Warm,
    /// The client's I/O backend for every cell: `io = "epoll"` or
    /// `"io_uring"` pins one; `"auto"` (the default) is the cheapest.
    pub io: IoBackend,
    /// `conformance = true`: verify also runs the HTTP/1.1 conformance
    /// probes on each server (a score kept in servers.verify, never a
    /// reason to leave a server out). Off by default: a server that holds
    /// connections open on bad requests spends a case's timeout on each,
    /// up to about 10 s a server, which the main job has no room for.
    pub conformance: bool,
    /// The suite file's text, stored with every run.
    pub source: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("no suite `{name}`: not a file and not in {dir} (there: {known})")]
    NotFound {
        name: String,
        dir: PathBuf,
        known: String,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{origin} is not a valid suite: {message}; see suites/quick.toml for an example")]
    Invalid { origin: String, message: String },
}

impl SuiteError {
    fn invalid(suite: &str, message: String) -> SuiteError {
        SuiteError::Invalid {
            origin: format!("suite `{suite}`"),
            message,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    #[serde(default)]
    description: String,
    servers: Vec<String>,
    #[serde(default)]
    repetitions: RawRepetitions,
    #[serde(default)]
    auto: Option<crate::adaptive::RawAdaptive>,
    #[serde(default)]
    cooldown: Option<String>,
    #[serde(default)]
    cell_timeout: Option<String>,
    #[serde(default)]
    quiet_wait: Option<String>,
    #[serde(default)]
    placement: Option<RawPlacement>,
    #[serde(default)]
    warmup: Option<crate::warm::RawWarm>,
    #[serde(default)]
    io: Option<String>,
    #[serde(default)]
    conformance: bool,
    scenarios: Vec<RawScenario>,
}

/// The most rounds a suite may ask for, as `--repetitions` and `[auto]
/// max` allow: 1,000 rounds of even one cell of a few seconds is days of
/// measuring. `repetitions = 100000000` once planned every cell up front,
/// took 5.3 GB and aborted (issue 42).
pub const MAX_REPETITIONS: u32 = 1000;

fn repetitions_out_of_range(n: u32) -> String {
    format!(
        "`repetitions = {n}` is not in 1..={MAX_REPETITIONS}: give fewer rounds, or \"auto\" to stop when the cells settle"
    )
}

/// `repetitions = 3` or `repetitions = "auto"`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawRepetitions {
    Count(u32),
    Word(String),
}

impl Default for RawRepetitions {
    fn default() -> Self {
        RawRepetitions::Count(1)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlacement {
    #[serde(default)]
    server_cpus: Option<String>,
    #[serde(default)]
    client_cpus: Option<String>,
    #[serde(default)]
    pin: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    endpoint: Endpoint,
    connections: Vec<u32>,
    #[serde(default)]
    duration: Option<String>,
    #[serde(default)]
    requests: Option<u64>,
    #[serde(default)]
    warmup: Option<String>,
    #[serde(default = "yes")]
    keepalive: bool,
    #[serde(default)]
    work_documents: Option<usize>,
    #[serde(default)]
    servers: Option<Vec<String>>,
    #[serde(default)]
    protocol: Option<String>,
    #[serde(default)]
    streams: Option<u32>,
    #[serde(default)]
    tls_resume: Option<bool>,
    // The scenario kinds' fields (crates/suite/src/kinds).
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    hold: Option<String>,
    #[serde(default)]
    heartbeat: Option<String>,
    #[serde(default)]
    requests_per_connection: Option<u32>,
    #[serde(default)]
    steps: Option<Vec<f64>>,
    #[serde(default)]
    slo_p99: Option<String>,
    #[serde(default)]
    rate: Option<f64>,
    #[serde(default)]
    pipeline: Option<u32>,
    // kind = "hostile"'s fields (crates/suite/src/kinds/hostile.rs).
    #[serde(default)]
    attacks: Option<Vec<String>>,
    #[serde(default)]
    attack_connections: Option<u32>,
    #[serde(default)]
    attack_for: Option<String>,
    #[serde(default)]
    after: Option<String>,
    #[serde(default)]
    window: Option<String>,
    #[serde(default)]
    jit_warmup: Option<String>,
    // Network placement (crates/suite/src/netns.rs).
    #[serde(default)]
    placement: Option<String>,
    #[serde(default)]
    bandwidth: Option<String>,
}

fn yes() -> bool {
    true
}

/// Parses `<number><unit>` with unit ns, us, ms, s, m or h; a bare number is
/// seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration; write it as 10s, 250ms, 1.5m or 1h"))?;
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}`; use ns, us, ms, s, m or h"
            ))
        }
    };
    let secs = value * scale;
    if !secs.is_finite() || secs > 1e9 {
        return Err(format!("`{s}` is too long"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// What starting a server and seeing it ready adds to a cell, for estimates
/// (most servers here are ready in well under a second; a JVM takes one).
pub const START_ALLOWANCE: Duration = Duration::from_secs(1);

/// The most distinct work documents a scenario may generate (each is kept in
/// memory with its expected answer for the whole cell).
pub const MAX_WORK_DOCUMENTS: usize = 1_000_000;

/// CPU numbers a list may name: what a Linux CPU set can hold.
pub const MAX_CPUS: usize = 1024;

/// `0`, `0-3`, `0,2,4-5`; numbers below [`MAX_CPUS`], so a typo such as
/// `0-18446744073709551615` is refused rather than expanded.
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b || b >= MAX_CPUS {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok().filter(|&c| c < MAX_CPUS)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    (!out.is_empty()).then_some(out)
}

impl Suite {
    /// Parses a suite's TOML text; `name` is how it is shown and stored.
    pub fn parse(name: &str, text: &str) -> Result<Suite, SuiteError> {
        let invalid = |message: String| SuiteError::invalid(name, message);
        let raw: RawSuite =
            toml::from_str(text).map_err(|e| invalid(crate::toml_error::describe(text, &e)))?;
        let duration =
            |field: &str, v: &Option<String>, default: Duration| -> Result<Duration, SuiteError> {
                match v {
                    None => Ok(default),
                    Some(s) => parse_duration(s).map_err(|e| {
                        invalid(format!("`{field} = \"{s}\"` is not a duration: {e}"))
                    }),
                }
            };
        if raw.servers.is_empty() {
            return Err(invalid(
                "`servers` is empty; use [\"*\"] for every server".into(),
            ));
        }
        let (repetitions, adaptive) = match (raw.repetitions, raw.auto) {
            (RawRepetitions::Count(n), _) if !(1..=MAX_REPETITIONS).contains(&n) => {
                return Err(invalid(repetitions_out_of_range(n)))
            }
            (RawRepetitions::Count(_), Some(_)) => {
                return Err(invalid(
                    "the [auto] table goes with `repetitions = \"auto\"`".into(),
                ))
            }
            (RawRepetitions::Count(n), None) => (n, None),
            (RawRepetitions::Word(w), auto) if w == "auto" => {
                let a = auto.unwrap_or_default().resolve().map_err(invalid)?;
                (a.min, Some(a))
            }
            (RawRepetitions::Word(w), _) => {
                return Err(invalid(format!(
                    "`repetitions = \"{w}\"`: give a count (3) or \"auto\""
                )))
            }
        };
        if raw.scenarios.is_empty() {
            return Err(invalid("no [[scenarios]]".into()));
        }
        let mut scenarios = Vec::new();
        for s in &raw.scenarios {
            let ctx = |m: &str| invalid(format!("scenario `{}`: {m}", s.name));
            if s.connections.is_empty() || s.connections.contains(&0) {
                return Err(ctx("`connections` must list counts of at least 1"));
            }
            let length = match (&s.duration, s.requests) {
                (Some(_), Some(_)) => return Err(ctx("give `duration` or `requests`, not both")),
                (_, Some(0)) => return Err(ctx("`requests` must be at least 1")),
                (_, Some(n)) => Length::Requests(n),
                (d, None) => match duration("duration", d, Duration::from_secs(10))? {
                    d if d.is_zero() => return Err(ctx("`duration` must be above zero")),
                    d => Length::Duration(d),
                },
            };
            if s.work_documents
                .is_some_and(|n| n == 0 || n > MAX_WORK_DOCUMENTS)
            {
                return Err(ctx(&format!(
                    "`work_documents` must be between 1 and {MAX_WORK_DOCUMENTS}"
                )));
            }
            if scenarios.iter().any(|o: &Scenario| o.name == s.name) {
                return Err(ctx("the name is used twice"));
            }
            let kind = RawKind {
                kind: s.kind.clone(),
                hold: s.hold.clone(),
                heartbeat: s.heartbeat.clone(),
                requests_per_connection: s.requests_per_connection,
                steps: s.steps.clone(),
                slo_p99: s.slo_p99.clone(),
                rate: s.rate,
                pipeline: s.pipeline,
                hostile: crate::kinds::hostile::RawHostile {
                    attacks: s.attacks.clone(),
                    attack_connections: s.attack_connections,
                    attack_for: s.attack_for.clone(),
                    after: s.after.clone(),
                    window: s.window.clone(),
                    jit_warmup: s.jit_warmup.clone(),
                },
            }
            .resolve(|field, v| {
                parse_duration(v).map_err(|e| format!("`{field} = \"{v}\"` is not a duration: {e}"))
            })
            .map_err(|m| ctx(&m))?;
            if !matches!(kind, Kind::Throughput) && s.requests.is_some() {
                return Err(ctx(&format!(
                    "`requests` goes with kind = \"throughput\" only; kind = \"{}\" is timed",
                    kind.name()
                )));
            }
            if matches!(kind, Kind::Pipelined { .. } | Kind::ShortLived { .. }) && !s.keepalive {
                return Err(ctx(&format!(
                    "kind = \"{}\" sets keep-alive itself; drop `keepalive = false`",
                    kind.name()
                )));
            }
            if s.servers.as_ref().is_some_and(Vec::is_empty) {
                return Err(ctx(
                    "`servers` is empty; leave it out to measure every server of the suite",
                ));
            }
            let (protocol, streams, tls_resume) = protocol_of(s, &kind).map_err(|m| ctx(&m))?;
            let (placement, bandwidth) = network(s).map_err(|m| ctx(&m))?;
            if matches!(kind, Kind::Hostile(_)) && placement != NetPlacement::Loopback {
                return Err(ctx(
                    "kind = \"hostile\" runs on loopback (`netbench attack` attacks loopback \
                     addresses only); drop `placement`",
                ));
            }
            scenarios.push(Scenario {
                name: s.name.clone(),
                endpoint: s.endpoint,
                connections: s.connections.clone(),
                length,
                warmup: duration("warmup", &s.warmup, Duration::ZERO)?,
                keepalive: s.keepalive,
                work_documents: s.work_documents.unwrap_or(1000).max(1),
                kind,
                placement,
                bandwidth,
                servers: s.servers.clone(),
                protocol,
                streams,
                tls_resume,
            });
        }
        let placement = match raw.placement {
            None => Placement::Auto,
            Some(p) if p.pin == Some(false) => Placement::None,
            Some(RawPlacement {
                server_cpus: None,
                client_cpus: None,
                ..
            }) => Placement::Auto,
            Some(RawPlacement {
                server_cpus: Some(s),
                client_cpus: Some(c),
                ..
            }) if s == "auto" && c == "auto" => Placement::Auto,
            Some(RawPlacement {
                server_cpus: Some(s),
                client_cpus: Some(c),
                ..
            }) => {
                let list = |v: &str| {
                    parse_cpu_list(v).ok_or_else(|| {
                        invalid(format!(
                            "`{v}` is not a CPU list such as 0 or 0-3 (CPU numbers 0 to {})",
                            MAX_CPUS - 1
                        ))
                    })
                };
                let (server, client) = (list(&s)?, list(&c)?);
                if server.iter().any(|c| client.contains(c)) {
                    return Err(invalid("server_cpus and client_cpus overlap".into()));
                }
                Placement::Pinned { server, client }
            }
            Some(_) => {
                return Err(invalid(
                    "give both server_cpus and client_cpus, or neither".into(),
                ))
            }
        };
        Ok(Suite {
            name: name.to_string(),
            description: raw.description,
            servers: raw.servers,
            scenarios,
            repetitions,
            adaptive,
            cooldown: duration("cooldown", &raw.cooldown, Duration::from_secs(1))?,
            placement,
            quiet_wait: duration("quiet_wait", &raw.quiet_wait, crate::noise::QUIET_MAX_WAIT)?,
            cell_timeout: match duration(
                "cell_timeout",
                &raw.cell_timeout,
                Duration::from_secs(300),
            )? {
                t if t.is_zero() => {
                    return Err(invalid("`cell_timeout` must be above zero".into()))
                }
                t => t,
            },
            warm: raw.warmup.unwrap_or_default().resolve().map_err(invalid)?,
            conformance: raw.conformance,
            io: match raw.io.as_deref() {
                None | Some("auto") => IoBackend::CHEAPEST,
                Some("epoll") => IoBackend::Epoll,
                Some("io_uring") => IoBackend::Uring,
                Some(other) => {
                    return Err(invalid(format!(
                        "`io = \"{other}\"`: use \"auto\" (the default: the cheapest, io_uring \
                         where the kernel allows it), \"epoll\" or \"io_uring\""
                    )))
                }
            },
            source: text.to_string(),
        })
    }

    /// Loads a suite by name from `dir` (`dir/<name>.toml`) or from a path.
    pub fn load(name_or_path: &str, dir: &Path) -> Result<Suite, SuiteError> {
        let as_path = Path::new(name_or_path);
        let (path, name) = if as_path.is_file() {
            let stem = as_path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or(name_or_path);
            (as_path.to_path_buf(), stem.to_string())
        } else {
            let p = dir.join(format!("{name_or_path}.toml"));
            if !p.is_file() {
                let mut known: Vec<String> = std::fs::read_dir(dir)
                    .map(|d| {
                        d.filter_map(|e| e.ok())
                            .filter_map(|e| {
                                e.path()
                                    .file_stem()
                                    .and_then(|s| s.to_str())
                                    .map(str::to_string)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                known.sort();
                return Err(SuiteError::NotFound {
                    name: name_or_path.to_string(),
                    dir: dir.to_path_buf(),
                    known: known.join(", "),
                });
            }
            (p, name_or_path.to_string())
        };
        let text = std::fs::read_to_string(&path).map_err(|source| SuiteError::Read {
            path: path.clone(),
            source,
        })?;
        Suite::parse(&name, &text)
    }

    /// The same suite with `repetitions` rounds instead of the file's
    /// (`--repetitions`). The text stays as written: the override is kept
    /// beside it, as a fact of the run.
    pub fn with_repetitions(mut self, repetitions: u32) -> Result<Suite, SuiteError> {
        if !(1..=MAX_REPETITIONS).contains(&repetitions) {
            return Err(SuiteError::invalid(
                &self.name,
                repetitions_out_of_range(repetitions),
            ));
        }
        self.repetitions = repetitions;
        self.adaptive = None;
        Ok(self)
    }

    /// The same suite with adaptive repetitions set to `a`.
    pub fn with_adaptive(mut self, a: Adaptive) -> Suite {
        self.repetitions = a.min;
        self.adaptive = Some(a);
        self
    }

    /// The same suite with repetitions given on the command line (or kept
    /// by a run being resumed).
    pub fn with(self, r: Repetitions) -> Result<Suite, SuiteError> {
        match r {
            Repetitions::Count(n) => self.with_repetitions(n),
            Repetitions::Auto(a) => Ok(self.with_adaptive(a)),
        }
    }

    /// `--repetitions auto`: the suite's own `[auto]` settings if it has
    /// them, else the defaults.
    pub fn auto_settings(&self) -> Adaptive {
        self.adaptive.unwrap_or_default()
    }

    /// How long measuring `cells` cells of this suite takes, spread evenly
    /// over its scenarios: warm-up, measurement and cool-down of each, plus
    /// [`START_ALLOWANCE`] to start the server and see it ready. None when a
    /// scenario is an exact request count, whose length depends on the server.
    pub fn estimate(&self, cells: usize) -> Option<Duration> {
        let per_round: usize = self.cells_per_round();
        if per_round == 0 {
            return Some(Duration::ZERO);
        }
        let mut round = Duration::ZERO;
        for s in &self.scenarios {
            let Length::Duration(d) = s.length else {
                return None;
            };
            // A warm phase lasts at least its minimum; a JIT server's takes
            // longer, so the estimate is a floor with it.
            let warm = match &self.warm.until_steady {
                Some(cfg) if s.kind.warms() => cfg.window * cfg.min_windows as u32,
                _ => Duration::ZERO,
            };
            let one = s.kind.cell_time(s.warmup + d, s.connections.len())
                + warm
                + self.cooldown
                + START_ALLOWANCE;
            round += one * s.cell_counts().len() as u32;
        }
        Some(round.mul_f64(cells as f64 / per_round as f64))
    }

    /// Whether any scenario puts its server in a network namespace (the run
    /// then needs root, `ip` and `tc`).
    pub fn needs_netns(&self) -> bool {
        self.scenarios
            .iter()
            .any(|s| s.placement == NetPlacement::Netns)
    }

    /// Measurements per repetition round and server variant.
    pub fn cells_per_round(&self) -> usize {
        self.scenarios.iter().map(|s| s.cell_counts().len()).sum()
    }
}

/// A scenario's `placement` and `bandwidth`, checked against each other
/// and its endpoint.
fn network(s: &RawScenario) -> Result<(NetPlacement, Option<Bandwidth>), String> {
    let placement = match s.placement.as_deref() {
        None => NetPlacement::Loopback,
        Some(p) => NetPlacement::parse(p).ok_or_else(|| {
            format!("`placement = \"{p}\"`: use \"loopback\" (the default) or \"netns\"")
        })?,
    };
    let bandwidth = s
        .bandwidth
        .as_deref()
        .map(|b| {
            parse_bandwidth(b).map_err(|e| format!("`bandwidth = \"{b}\"` is not a bandwidth: {e}"))
        })
        .transpose()?;
    if bandwidth.is_some() && placement != NetPlacement::Netns {
        return Err(
            "`bandwidth` goes with placement = \"netns\" (tc shapes the veth pair; loopback is \
             not shaped)"
                .into(),
        );
    }
    if placement == NetPlacement::Netns && s.endpoint.uses_database() {
        return Err(format!(
            "endpoint = \"{}\" cannot go with placement = \"netns\": the server in its network \
             namespace cannot reach the runner's PostgreSQL, which listens on loopback in \
             netbench's namespace; keep db scenarios on loopback",
            s.endpoint.name()
        ));
    }
    Ok((placement, bandwidth))
}

/// A scenario's protocol, its streams and TLS resumption, checked: HTTP/2's
/// streams only over HTTP/2, resumption only over TLS, gRPC only for work,
/// and protocols other than HTTP/1.1 only for the endpoints every server
/// serves on every listener (blank, echo, work) and the kinds that load
/// them (throughput, fixed-rate, a storm).
fn protocol_of(s: &RawScenario, kind: &Kind) -> Result<(Protocol, u32, bool), String> {
    let protocol = match s.protocol.as_deref() {
        None => Protocol::H1,
        Some(name) => Protocol::parse(name).ok_or_else(|| {
            let all: Vec<&str> = Protocol::ALL.iter().map(|p| p.as_str()).collect();
            format!("`protocol = \"{name}\"`: give one of {}", all.join(", "))
        })?,
    };
    let streams = s.streams.unwrap_or(1);
    if s.streams.is_some() && !protocol.is_h2() {
        return Err("`streams` is HTTP/2's: give protocol = \"h2\", \"h2c\" or \"grpc\"".into());
    }
    if !(1..=1024).contains(&streams) {
        return Err("`streams` must be between 1 and 1024".into());
    }
    let tls_resume = s.tls_resume.unwrap_or(false);
    if tls_resume && !matches!(protocol, Protocol::Tls | Protocol::H2) {
        return Err("`tls_resume` is TLS's: give protocol = \"tls\" or \"h2\"".into());
    }
    if protocol == Protocol::Grpc && s.endpoint != Endpoint::Work {
        return Err("gRPC's call is work's computation: give endpoint = \"work\"".into());
    }
    if protocol != Protocol::H1 {
        if !matches!(
            s.endpoint,
            Endpoint::Blank | Endpoint::Echo | Endpoint::Work
        ) {
            return Err(format!(
                "protocol = \"{}\" goes with endpoint blank, echo or work",
                protocol.as_str()
            ));
        }
        if !matches!(
            kind,
            Kind::Throughput | Kind::FixedRate { .. } | Kind::Storm
        ) {
            return Err(format!(
                "protocol = \"{}\" goes with kind throughput, fixed-rate or storm",
                protocol.as_str()
            ));
        }
    }
    Ok((protocol, streams, tls_resume))
}

impl Scenario {
    /// The optional contract part a server must offer to be measured in
    /// it: its endpoint's, or its protocol's (the two never both).
    pub fn needs(&self) -> Option<crate::manifest::Offer> {
        self.endpoint.needs().or(self.protocol.needs())
    }

    /// Whether the scenario measures the variant `variant` ("" for the
    /// default) of server `name`, whose default runs on glibc's malloc when
    /// `glibc` (so `name:glibc` selects it, as the suite's selectors do).
    pub fn selects(&self, name: &str, variant: &str, glibc: bool) -> bool {
        self.servers.as_ref().is_none_or(|selectors| {
            selectors.iter().any(|s| {
                selector_matches(s, name, variant)
                    || (variant.is_empty() && glibc && selector_matches(s, name, "glibc"))
            })
        })
    }
}

/// Whether a server selector matches `name` (variant `variant`, "" for the
/// default): `*`, `go-*`, `java-jdk`, `java-jdk:nodelay`, `*:*`.
pub fn selector_matches(selector: &str, name: &str, variant: &str) -> bool {
    let (sel_name, sel_variant) = match selector.split_once(':') {
        Some((n, v)) => (n, v),
        None => (selector, ""),
    };
    glob(sel_name, name) && glob(sel_variant, variant)
}

/// `*` matches any run of characters; nothing else is special.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(after) = text.strip_prefix(head) else {
                return false;
            };
            (0..=after.len())
                .filter(|&i| after.is_char_boundary(i))
                .any(|i| glob(rest, &after[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: &str = r#"
        description = "smoke"
        servers = ["*"]
        repetitions = 2
        cooldown = "500ms"
        [[scenarios]]
        name = "blank"
        endpoint = "blank"
        connections = [1, 100]
        duration = "3s"
        warmup = "1s"
        [[scenarios]]
        name = "stress"
        endpoint = "blank"
        connections = [10]
        requests = 100000
        keepalive = false
    "#;

    #[test]
    fn the_1_2_and_1_3_parts_endpoints_parse_and_need_their_part() {
        use crate::manifest::Offer;
        let text = r#"
servers = ["a"]
[[scenarios]]
name = "s"
endpoint = "static"
connections = [1]
[[scenarios]]
name = "s1m"
endpoint = "static-1m"
connections = [1]
[[scenarios]]
name = "u"
endpoint = "upload"
connections = [1]
[[scenarios]]
name = "j"
endpoint = "json-comp"
connections = [1]
[[scenarios]]
name = "f"
endpoint = "fortunes"
connections = [1]
[[scenarios]]
name = "q"
endpoint = "queries"
connections = [1]
[[scenarios]]
name = "up"
endpoint = "updates"
connections = [1]
"#;
        let suite = Suite::parse("t", text).unwrap();
        let got: Vec<_> = suite
            .scenarios
            .iter()
            .map(|s| (s.endpoint.name(), s.endpoint.needs()))
            .collect();
        assert_eq!(
            got,
            [
                ("static", Some(Offer::Static)),
                ("static-1m", Some(Offer::Static)),
                ("upload", Some(Offer::Upload)),
                ("json-comp", Some(Offer::JsonComp)),
                ("fortunes", Some(Offer::Fortunes)),
                ("queries", Some(Offer::Queries)),
                ("updates", Some(Offer::Updates)),
            ]
        );
        let database: Vec<_> = suite
            .scenarios
            .iter()
            .filter(|s| s.endpoint.uses_database())
            .map(|s| s.endpoint.name())
            .collect();
        assert_eq!(database, ["fortunes", "queries", "updates"]);
        let bad = text.replace("static-1m", "static-2m");
        assert!(Suite::parse("t", &bad).is_err());
    }

    #[test]
    fn work_browser_needs_no_part_and_stays_on_http_1_1() {
        let text = r#"
servers = ["a"]
[[scenarios]]
name = "wb"
endpoint = "work-browser"
connections = [1]
"#;
        let suite = Suite::parse("t", text).unwrap();
        let s = &suite.scenarios[0];
        assert_eq!(
            (s.endpoint.name(), s.endpoint.needs()),
            ("work-browser", None)
        );
        assert!(!s.endpoint.uses_database());
        let h2 = text.replace("connections = [1]", "connections = [1]\nprotocol = \"h2c\"");
        let err = Suite::parse("t", &h2).unwrap_err().to_string();
        assert!(
            err.contains("goes with endpoint blank, echo or work"),
            "{err}"
        );
    }

    #[test]
    fn parses_a_suite() {
        let s = Suite::parse("quick", QUICK).unwrap();
        assert_eq!(s.repetitions, 2);
        assert_eq!(s.cooldown, Duration::from_millis(500));
        assert_eq!(s.placement, Placement::Auto);
        assert_eq!(
            s.scenarios[0].length,
            Length::Duration(Duration::from_secs(3))
        );
        assert_eq!(s.scenarios[0].warmup, Duration::from_secs(1));
        assert_eq!(s.scenarios[1].length, Length::Requests(100_000));
        assert!(!s.scenarios[1].keepalive);
        assert_eq!(s.cells_per_round(), 3);
        assert_eq!(s.io, IoBackend::CHEAPEST, "the cheapest unless pinned");
    }

    #[test]
    fn a_suite_may_pin_the_client_backend() {
        let with = |io: &str| Suite::parse("t", &format!("io = \"{io}\"\n{QUICK}"));
        assert_eq!(with("epoll").unwrap().io, IoBackend::Epoll);
        assert_eq!(with("io_uring").unwrap().io, IoBackend::Uring);
        assert_eq!(with("auto").unwrap().io, IoBackend::CHEAPEST);
        let err = with("uring").unwrap_err().to_string();
        assert!(err.contains("use \"auto\""), "{err}");
    }

    #[test]
    fn refuses_mistakes_with_reasons() {
        let bad = |from: &str, to: &str, why: &str| {
            let err = Suite::parse("t", &QUICK.replace(from, to))
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{err}");
        };
        bad("repetitions = 2", "repetitions = 0", "not in 1..=1000");
        // Issue 42: planned up front, this took 5.3 GB and aborted.
        bad(
            "repetitions = 2",
            "repetitions = 100000000",
            "not in 1..=1000",
        );
        bad("repetitions = 2", "repetitions = 1001", "\"auto\" to stop");
        bad(
            "duration = \"3s\"",
            "duration = \"3 parsecs\"",
            "not a duration",
        );
        bad("connections = [10]", "connections = [0]", "at least 1");
        bad(
            "requests = 100000",
            "requests = 100000\n        duration = \"1s\"",
            "not both",
        );
        bad("endpoint = \"blank\"", "endpoint = \"blink\"", "blink");
        bad("cooldown", "cooldwn", "cooldwn");
        bad("servers = [\"*\"]", "servers = []", "every server");
        bad("duration = \"3s\"", "duration = \"0s\"", "above zero");
        bad(
            "repetitions = 2",
            "repetitions = 2\ncell_timeout = \"0ms\"",
            "`cell_timeout` must be above zero",
        );
        bad(
            "repetitions = 2",
            "repetitions = 2\nrepetitons = 3",
            "line 5, column 1",
        );
        let pinned = QUICK.replace(
            "cooldown = \"500ms\"",
            "cooldown = \"1s\"\n[placement]\nserver_cpus = \"0-1\"\nclient_cpus = \"1-2\"",
        );
        assert!(Suite::parse("t", &pinned)
            .unwrap_err()
            .to_string()
            .contains("overlap"));
    }

    #[test]
    fn network_placement_and_bandwidth_per_scenario() {
        let lan = r#"
            servers = ["*"]
            [[scenarios]]
            name = "blank"
            endpoint = "blank"
            connections = [1]
            [[scenarios]]
            name = "blank-veth"
            endpoint = "blank"
            connections = [1]
            placement = "netns"
            [[scenarios]]
            name = "blank-veth-1gbit"
            endpoint = "blank"
            connections = [1]
            placement = "netns"
            bandwidth = "1gbit"
        "#;
        let s = Suite::parse("lan", lan).unwrap();
        let got: Vec<_> = s
            .scenarios
            .iter()
            .map(|s| (s.placement, s.bandwidth.map(|b| b.bits_per_s)))
            .collect();
        assert_eq!(
            got,
            [
                (NetPlacement::Loopback, None),
                (NetPlacement::Netns, None),
                (NetPlacement::Netns, Some(1_000_000_000)),
            ]
        );
        assert!(s.needs_netns());
        assert!(!Suite::parse("quick", QUICK).unwrap().needs_netns());

        let bad = |from: &str, to: &str, why: &[&str]| {
            let err = Suite::parse("lan", &lan.replace(from, to))
                .unwrap_err()
                .to_string();
            for w in why {
                assert!(err.contains(w), "{err}");
            }
        };
        bad(
            "bandwidth = \"1gbit\"",
            "bandwidth = \"1 gigabit\"",
            &["scenario `blank-veth-1gbit`", "not a bandwidth", "gigabit"],
        );
        bad(
            "bandwidth = \"1gbit\"",
            "bandwidth = \"1000\"",
            &["scenario `blank-veth-1gbit`", "no unit"],
        );
        bad(
            "placement = \"netns\"\n            bandwidth",
            "bandwidth",
            &[
                "scenario `blank-veth-1gbit`",
                "goes with placement = \"netns\"",
            ],
        );
        bad(
            "placement = \"netns\"\n            [[",
            "placement = \"veth\"\n            [[",
            &["scenario `blank-veth`", "\"loopback\"", "\"netns\""],
        );
        for db in ["db", "db-list"] {
            bad(
                "endpoint = \"blank\"\n            connections = [1]\n            placement",
                &format!(
                    "endpoint = \"{db}\"\n            connections = [1]\n            placement"
                ),
                &["scenario `blank-veth`", "PostgreSQL", "loopback"],
            );
        }
        // ws and the kinds go anywhere.
        let ws = lan.replace("endpoint = \"blank\"", "endpoint = \"ws\"");
        assert!(Suite::parse("lan", &ws).is_ok());
    }

    #[test]
    fn repetitions_from_the_command_line_leave_the_text_alone() {
        let s = Suite::parse("quick", QUICK)
            .unwrap()
            .with_repetitions(5)
            .unwrap();
        assert_eq!(s.repetitions, 5);
        assert_eq!(s.source, QUICK);
        let zero = Suite::parse("quick", QUICK).unwrap().with_repetitions(0);
        assert!(zero.unwrap_err().to_string().contains("not in 1..=1000"));
        let many = Suite::parse("quick", QUICK).unwrap().with_repetitions(1001);
        assert!(many.unwrap_err().to_string().contains("not in 1..=1000"));
        assert!(Suite::parse("quick", QUICK)
            .unwrap()
            .with_repetitions(MAX_REPETITIONS)
            .is_ok());
    }

    #[test]
    fn estimates_count_warmup_duration_cooldown_and_start() {
        let timed = r#"
            servers = ["*"]
            cooldown = "500ms"
            [[scenarios]]
            name = "blank"
            endpoint = "blank"
            connections = [1, 100]
            duration = "2s"
            warmup = "500ms"
        "#;
        let s = Suite::parse("t", timed).unwrap();
        // Per cell: 0.5 s warm-up + 2 s + 0.5 s cool-down + 1 s to start.
        assert_eq!(s.estimate(6), Some(Duration::from_secs(4 * 6)));
        assert_eq!(s.estimate(0), Some(Duration::ZERO));
        let q = Suite::parse("quick", QUICK).unwrap();
        assert_eq!(
            q.estimate(4),
            None,
            "a request count has no length of its own"
        );
    }

    #[test]
    fn cpu_lists_and_durations() {
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("0-2,5"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(parse_cpu_list("0-18446744073709551615"), None);
        assert_eq!(parse_cpu_list("1024"), None);
        assert_eq!(parse_cpu_list("1023").map(|l| l.len()), Some(1));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("x").is_err());
    }

    #[test]
    fn selectors() {
        assert!(selector_matches("*", "go-nethttp", ""));
        assert!(!selector_matches("*", "java-jdk", "nodelay"));
        assert!(selector_matches("java-jdk:nodelay", "java-jdk", "nodelay"));
        assert!(selector_matches("*:*", "java-jdk", "nodelay"));
        assert!(selector_matches("*:*", "java-jdk", ""));
        assert!(selector_matches("go-*", "go-nethttp", ""));
        assert!(!selector_matches("go-*", "rust-hyper", ""));
        assert!(selector_matches("*-http", "node-http", ""));
    }

    #[test]
    fn the_shipped_suites_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites");
        let servers = dir.join("../servers");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.strip_suffix(".toml").map(str::to_string)
            })
            .collect();
        names.sort();
        for required in [
            "quick",
            "standard",
            "full",
            "stress",
            "allocators",
            "models",
        ] {
            assert!(
                names.iter().any(|n| n == required),
                "suites/{required}.toml is missing"
            );
        }
        for name in &names {
            let s = Suite::load(name, &dir).unwrap_or_else(|e| panic!("{e}"));
            assert!(!s.scenarios.is_empty());
            // Each selector picks something: a typo in a server or variant
            // name must not quietly shrink a study.
            for selector in &s.servers {
                let picked =
                    crate::targets::select(&servers, std::slice::from_ref(selector)).unwrap();
                assert!(
                    !picked.is_empty(),
                    "suites/{name}.toml: `{selector}` selects no server"
                );
            }
        }
        assert!(Suite::load("nope", &dir)
            .unwrap_err()
            .to_string()
            .contains("quick"));
    }
}
