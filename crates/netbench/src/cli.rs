//! Stage one of argument handling: what the user typed, parsed and range
//! checked by clap, with no system calls. `load::plan` turns it into a plan.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use netbench_report::{GateRules, GateSyntaxError};

use crate::durations::{parse_duration, positive_duration};
use crate::help::{
    ATTACK_HELP, COMPARE_HELP, EXIT_CODES, LOAD_HELP, MERGE_HELP, REPORT_HELP, RUN_HELP, SITE_HELP,
    VERIFY_HELP,
};
use crate::sources::{parse_source_arg, Sources};
use crate::start_at::parse_start_at;

#[derive(Debug, Parser)]
#[command(
    name = "netbench",
    version,
    about = "Benchmarks network servers fairly, with numbers that carry their own evidence",
    after_help = EXIT_CODES
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Generate HTTP/1.1 load against one URL and report throughput, latency
    /// percentiles, errors by kind, and whether the client was the bottleneck.
    #[command(after_help = LOAD_HELP)]
    Load(Box<LoadArgs>),
    /// Check a running server against the contract (contract/CONTRACT.md):
    /// each check passes, warns or fails with a one-line reason.
    #[command(after_help = VERIFY_HELP)]
    Verify(VerifyArgs),
    /// Run a suite: build every server, verify each against the contract, run
    /// the whole matrix with the server and client on disjoint CPUs, store
    /// every number in SQLite and print the table.
    #[command(after_help = RUN_HELP)]
    Run(RunArgs),
    /// List the runs in the results store.
    Runs(StoreArgs),
    /// Print a stored run's table (the latest when RUN is omitted).
    Show(ShowArgs),
    /// Write a stored run's report: HTML with charts (the default, to
    /// results/run-<RUN>/report.html), Markdown, CSV or JSON.
    #[command(after_help = REPORT_HELP)]
    Report(ReportArgs),
    /// Compare two stored runs cell by cell: the change of each median with
    /// its 95% interval, and whether it is significant; or, with --pair, two
    /// server variants of one run, paired within its rounds.
    #[command(after_help = COMPARE_HELP)]
    Compare(CompareArgs),
    /// Merge the histogram files of loads run in several processes or on
    /// several machines (`load --histogram-out`) into one exact result.
    #[command(after_help = MERGE_HELP)]
    Merge(MergeArgs),
    /// Write a static site of the whole store into a folder: an index of
    /// the runs with the latest result per suite, every run's report, and a
    /// page per server with its history and timelines (works offline).
    #[command(after_help = SITE_HELP)]
    Site(SiteArgs),
    /// Attack a server on this machine as a hostile client would (issue 33):
    /// slowloris, slow reads, malformed or oversized requests, a connection
    /// flood, tiny TCP segments. Loopback addresses only; bounded by
    /// --connections and --for.
    #[command(after_help = ATTACK_HELP)]
    Attack(AttackArgs),
}

/// The attacks, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AttackKindArg {
    /// Request heads sent a byte per --interval, never finished.
    Slowloris,
    /// Keep-alive requests whose answers are read a byte per --interval.
    SlowRead,
    /// Broken requests as fast as the connections allow.
    Malformed,
    /// Requests with 64 KiB to 1 MiB request lines or header blocks.
    Oversized,
    /// Connections opened as fast as possible and held idle.
    ConnFlood,
    /// Complete requests sent a byte per TCP segment.
    TcpFrag,
}

#[derive(Debug, Args)]
pub(crate) struct AttackArgs {
    /// The attack.
    #[arg(value_enum)]
    pub kind: AttackKindArg,
    /// The server's URL: http://127.0.0.1:PORT/ (loopback only; a path other
    /// than / is the path requested).
    pub url: String,
    /// How many connections at once (held kinds up to 65536, floods up to
    /// 1024; fewer when the open-file limit is lower).
    #[arg(short = 'c', long, value_name = "N")]
    pub connections: usize,
    /// How long the attack lasts; it stops by itself then (at most 24h).
    #[arg(long = "for", value_name = "DURATION", value_parser = positive_duration)]
    pub duration: Duration,
    /// slowloris and slow-read: the pause between two bytes [default: 2s].
    #[arg(long, value_parser = positive_duration)]
    pub interval: Option<Duration>,
    /// The path requested (slow-read: default /static/1m, the contract's
    /// static offer; tcp-frag: /blank).
    #[arg(long)]
    pub path: Option<String>,
    /// Print the summary as one JSON object instead of a line of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SiteArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The folder to write the site into (created when missing).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub output: PathBuf,
    /// Write into a folder that holds other files and no earlier site.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// Histogram files written by `netbench load --histogram-out`.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print the result as JSON (schema/load-result.v1.schema.json).
    #[arg(long)]
    pub json: bool,
    /// Also write the merged result as a histogram file (to merge again).
    #[arg(long, value_name = "FILE")]
    pub histogram_out: Option<PathBuf>,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ReportFormat {
    Html,
    Md,
    Csv,
    Json,
}

/// Comparison formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CompareFormat {
    Text,
    Html,
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// The run's id (see `netbench runs`); the latest when omitted.
    pub run: Option<i64>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Write here instead of the default (HTML) or standard output (others).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// What to write: an HTML page with charts, Markdown tables, long-format
    /// CSV, or JSON.
    #[arg(long, value_enum, default_value = "html")]
    pub format: ReportFormat,
}

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The baseline run (with --pair: the run holding both variants).
    pub run_a: i64,
    /// The run compared against it (not with --pair).
    #[arg(required_unless_present = "pair")]
    pub run_b: Option<i64>,
    /// Compare two server variants of one run, B against A, paired within
    /// its rounds, such as `--pair rust-hyper rust-hyper:slow` (see below).
    #[arg(
        long,
        num_args = 2,
        value_names = ["A", "B"],
        conflicts_with_all = ["run_b", "absolute", "noise_floor", "max_floor"]
    )]
    pub pair: Option<Vec<String>>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Write here instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// What to write: aligned text tables, an HTML page with charts, or
    /// JSON.
    #[arg(long, value_enum, default_value = "text")]
    pub format: CompareFormat,
    /// Compare the figures as measured (normalised by the CPU probe when
    /// both runs carry it) instead of beyond the run-wide shift, e.g. to
    /// see a change every server shares, such as a new kernel.
    #[arg(long)]
    pub absolute: bool,
    /// Fail (exit 1) when a row moves beyond these rules and beyond noise,
    /// such as 'rps<-5%,p99>+10%' (see below).
    #[arg(long, value_name = "RULES", value_parser = parse_fail_on)]
    pub fail_on: Option<GateRules>,
    /// With --fail-on: no row's change counts as beyond noise within this
    /// percent, such as 25%, whatever its repetitions say (the between-run
    /// spread an A/A pair showed on this machine; see below).
    #[arg(long, value_name = "PERCENT", value_parser = parse_floor, requires = "fail_on")]
    pub noise_floor: Option<f64>,
    /// With --fail-on: fail (exit 1) when a row's noise floor is above this
    /// percent, such as 20%: the gate could not see a change that size there.
    #[arg(long, value_name = "PERCENT", value_parser = parse_floor, requires = "fail_on")]
    pub max_floor: Option<f64>,
}

/// `25%` as 0.25: a size of change, with its `%`, above 0 and below 100%
/// (a fall of 100% or more is no figure at all).
fn parse_floor(s: &str) -> Result<f64, String> {
    let digits = s
        .trim()
        .strip_suffix('%')
        .ok_or_else(|| format!("`{s}` is not a percent; write it with %, such as 20%"))?;
    let plain = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    match digits.parse::<f64>() {
        Ok(v) if plain && v > 0.0 && v < 100.0 => Ok(v / 100.0),
        _ => Err(format!(
            "`{s}` is not a size of change; write a percent above 0 and below 100, such as 20%"
        )),
    }
}

/// `--fail-on`: the report crate's pure parser, so a typo exits 2 before
/// any store is opened.
fn parse_fail_on(s: &str) -> Result<GateRules, GateSyntaxError> {
    s.parse()
}

/// Where the results store is unless --db says otherwise.
pub(crate) const DEFAULT_DB: &str = "results/netbench.sqlite";

#[derive(Debug, Args)]
pub(crate) struct StoreArgs {
    /// The results store (SQLite).
    #[arg(long, default_value = DEFAULT_DB)]
    pub db: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The run's id (see `netbench runs`); the latest when omitted.
    pub run: Option<i64>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// A suite name under --suites, or a path to a suite file.
    #[arg(default_value = "standard")]
    pub suite: String,

    /// Finish an interrupted run: its finished cells are kept, the rest run.
    #[arg(long, value_name = "RUN", conflicts_with = "suite")]
    pub resume: Option<i64>,

    /// Repetitions of every cell instead of the suite's (2 in standard): a
    /// count from 1 to 1000, or `auto`: 3 rounds, then more rounds of only the
    /// cells whose 95% interval is wider than ±5%, until each settles, 10
    /// rounds, or a 25-minute budget (a suite's [auto] table changes these).
    /// `netbench compare` needs 4 or more a side to call a change
    /// significant.
    #[arg(long, value_name = "N|auto", conflicts_with = "resume",
          value_parser = parse_repetitions)]
    pub repetitions: Option<RepetitionsArg>,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Where the servers are (one folder with a server.toml each).
    #[arg(long, default_value = "servers")]
    pub servers: PathBuf,

    /// Where suite names are looked up.
    #[arg(long, default_value = "suites")]
    pub suites: PathBuf,

    /// When another run is measuring on this machine, exit (2) at once
    /// instead of waiting for it to end. Runs take turns through an flock
    /// on $NETBENCH_LOCK, else /run/lock/netbench.lock, else netbench.lock
    /// in the temporary folder.
    #[arg(long)]
    pub no_wait: bool,
}

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The server's base URL: http://host:port/ (a path is a prefix for every
    /// endpoint).
    pub url: String,

    /// Seed of the random work documents; printed with the result so a
    /// failure can be reproduced. Default: a new one each run.
    #[arg(long)]
    pub seed: Option<u64>,

    /// How many random work documents to check.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub documents: u64,

    /// How long to wait for each answer.
    #[arg(long, value_parser = positive_duration, default_value = "5s")]
    pub timeout: Duration,

    /// The PostgreSQL the server's db endpoints read
    /// (postgres://user@host:port/db, with contract/db/schema.sql loaded):
    /// runs the db checks, which change rows of its `items` table through it
    /// and put them back. Without it the db checks are skipped.
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,

    /// Run the ws checks: the server offers WebSocket echo at /ws (upgrade,
    /// echo of text and binary, fragments, ping, close, unmasked frames
    /// refused). Without it the ws checks are skipped.
    #[arg(long)]
    pub ws: bool,

    /// Run the static checks: the server offers /static/14k and /static/1m
    /// (the contract's files byte for byte, Content-Length, ETag,
    /// Last-Modified, 304 for If-None-Match).
    #[arg(long = "static")]
    pub static_files: bool,

    /// Run the upload checks: the server offers POST /upload (length and
    /// SHA-256 of bodies up to 8 MiB, no answer before the body is whole,
    /// 413 for a body over 16 MiB and for a 10 GB Content-Length).
    #[arg(long)]
    pub upload: bool,

    /// Run the json-comp checks: the server compresses /work answers when
    /// Accept-Encoding allows it (gzip, optionally br) and only then.
    #[arg(long)]
    pub json_comp: bool,

    /// Run the fortunes checks (needs --database-url): the server offers
    /// GET /fortunes, the fortune table as an HTML page, sorted, escaped
    /// and never cached (verify adds a row through the database).
    #[arg(long)]
    pub fortunes: bool,

    /// Run the queries checks (needs --database-url): GET /queries?queries=N
    /// answers N random World rows as the table holds them, N clamped to
    /// 1..500 as TechEmpower does; verify changes the table to catch caches.
    #[arg(long)]
    pub queries: bool,

    /// Run the updates checks (needs --database-url): GET /updates?queries=N
    /// changes N random World rows and writes them; verify reads them back,
    /// then puts the table back to its seeded values.
    #[arg(long)]
    pub updates: bool,

    /// Run the app checks: GET /app?page=K keeps a server-side session per
    /// cookie (made, locked, counted, ended by POST /app/logout) and renders
    /// a 10 KB page of escaped rows with contract/app's files, gzip when
    /// asked.
    #[arg(long)]
    pub app: bool,

    /// Run the tls check on the server's TLS listener at this port (on the
    /// URL's host): work documents over TLS, the certificate checked against
    /// --cacert.
    #[arg(long, value_name = "PORT", requires = "cacert")]
    pub tls_port: Option<u16>,

    /// With --tls-port: run the h2 check too, HTTP/2 by ALPN h2 on the TLS
    /// listener, 20 streams at once.
    #[arg(long, requires = "tls_port")]
    pub h2: bool,

    /// Run the h2c check on the HTTP/2 prior-knowledge listener at this port.
    #[arg(long, value_name = "PORT")]
    pub h2c_port: Option<u16>,

    /// Run the grpc checks on the gRPC listener at this port: random
    /// netbench.Work/Compute calls, and an invalid one that must fail as
    /// INVALID_ARGUMENT.
    #[arg(long, value_name = "PORT")]
    pub grpc_port: Option<u16>,

    /// The authority (PEM) the TLS listener's certificate must lead to.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<std::path::PathBuf>,

    /// Run the HTTP/1.1 conformance probes too (RFC 9112/9110 cases,
    /// against the contract's /blank and /echo/): a score with the failed
    /// cases listed, never a failure of verify.
    #[arg(long)]
    pub conformance: bool,

    /// Run only the HTTP/1.1 conformance probes, against any HTTP/1.1
    /// server (nginx, your own): no contract checks. Exits 0 whatever the
    /// score, 2 when the server cannot be reached.
    #[arg(long, conflicts_with_all = [
        "conformance", "seed", "database_url", "ws", "static_files", "upload", "json_comp",
        "fortunes", "queries", "updates", "app", "tls_port", "h2c_port", "grpc_port",
    ])]
    pub conformance_only: bool,

    /// With --conformance-only: the path probed, a cheap GET that answers
    /// below 400 (default: the URL's path, else /).
    #[arg(long, value_name = "PATH", requires = "conformance_only")]
    pub path: Option<String>,

    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct LoadArgs {
    /// The target: http[s]://host[:port]/path?query (ws:// and wss:// with
    /// --ws). IPv6 literals go in brackets; a host name is resolved once,
    /// before the run.
    pub url: String,

    /// Connections to keep open (each carries one request at a time unless
    /// --pipeline is set).
    #[arg(short = 'c', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,

    /// Worker threads, each with its own event loop. Default: the CPUs this
    /// process may run on (its affinity mask), at most one per connection.
    #[arg(short = 't', long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,

    /// Measure for this long (10s, 500ms, 2m). Default 10s unless -n is given.
    #[arg(short = 'd', long, value_parser = parse_duration, conflicts_with = "requests")]
    pub duration: Option<Duration>,

    /// Measure exactly this many requests, spread over the connections.
    #[arg(short = 'n', long, value_parser = clap::value_parser!(u64).range(1..))]
    pub requests: Option<u64>,

    /// Open loop: send this many requests per second in total, on schedule,
    /// whether or not earlier ones were answered.
    #[arg(short = 'R', long)]
    pub rate: Option<f64>,

    /// Run this long before measuring; its numbers are dropped.
    #[arg(long, value_parser = parse_duration, default_value = "0s")]
    pub warmup: Duration,

    /// A request (or connect) not done within this time fails as a timeout.
    #[arg(long, value_parser = positive_duration, default_value = "5s")]
    pub timeout: Duration,

    /// Open a new connection for every request (sends Connection: close);
    /// connect time is reported separately.
    #[arg(long)]
    pub no_keepalive: bool,

    /// Close each connection after this many answers and open a new one
    /// (short-lived connections; 1 is like --no-keepalive but the client
    /// closes, without Connection: close).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub requests_per_connection: Option<u32>,

    /// Write this many requests back to back on a connection before reading
    /// the answers (HTTP/1.1 pipelining). Closed loop with keep-alive only.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub pipeline: u32,

    /// HTTP/2 over TLS (RFC 9113; an https:// URL; ALPN offers h2 alone):
    /// each request is a stream, --streams of them in flight per connection.
    #[arg(long, conflicts_with_all = ["h2c", "pipeline", "no_keepalive", "ws", "app"])]
    pub h2: bool,

    /// HTTP/2 over cleartext with prior knowledge (h2c; an http:// URL): the
    /// connection opens with HTTP/2's preface, no Upgrade.
    #[arg(long, conflicts_with_all = ["pipeline", "no_keepalive", "ws", "app"])]
    pub h2c: bool,

    /// The contract's gRPC call (CONTRACT.md, version 1.5): each request is
    /// netbench.Work/Compute of a generated work document (--work N of them,
    /// 100 by default; --seed), over HTTP/2 (h2 on an https:// URL, else
    /// h2c), each reply checked against its own document's and its
    /// grpc-status 0. Point the URL at the gRPC listener.
    #[arg(long, conflicts_with_all = [
        "method", "body", "body_file", "body_pool", "pipeline", "no_keepalive", "ws", "app",
        "expect_status", "expect_content_type", "expect_body", "expect_json", "compressed",
    ])]
    pub grpc: bool,

    /// Streams each HTTP/2 connection keeps in flight (h2load's -m; -m is the
    /// method here), a new one started as soon as one ends. With --rate,
    /// the most a connection carries at once.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub streams: u32,

    /// HTTP method. Default: GET, or POST when a body is given.
    #[arg(short = 'm', long)]
    pub method: Option<String>,

    /// A request header, 'Name: value'; repeat for several.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,

    /// The request body, as given.
    #[arg(long, conflicts_with_all = ["body_file", "body_pool", "work"])]
    pub body: Option<String>,

    /// Read the request body from this file.
    #[arg(long, conflicts_with_all = ["body_pool", "work"])]
    pub body_file: Option<PathBuf>,

    /// Send the bodies of this JSON-lines file round-robin, each checked
    /// against its own expected answer (see below).
    #[arg(long, conflicts_with = "work")]
    pub body_pool: Option<PathBuf>,

    /// The contract's work test: POST this many distinct generated work
    /// documents round-robin, each answer checked (status 200,
    /// application/json, JSON-equal to its own expected answer). Point the
    /// URL at the server's /work.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub work: Option<u64>,

    /// Dates per generated work document (documents × dates: at most 2,000,000).
    #[arg(long, default_value_t = 10, requires = "work", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub work_dates: u64,

    /// Seed of the generated work documents or app pages (printed with the
    /// result). Default: a new one each run.
    #[arg(long)]
    pub seed: Option<u64>,

    /// The contract's app (CONTRACT.md, `app`): every connection is a
    /// browser with a session. Its first page makes the session (the
    /// server's Set-Cookie is kept), the next 19 send the cookie, then it
    /// logs out (POST /app/logout) and starts again; each page (GET
    /// /app?page=K, K from 100 seeded pages, gzip asked for) is checked
    /// whole: its session's visits one more, since and the cookie the
    /// same, its 50 rows and contract/app's files. A broken session counts
    /// as `session`. Point the URL at the server's root.
    #[arg(long, conflicts_with_all = [
        "method", "body", "body_file", "body_pool", "work", "pipeline", "no_keepalive",
        "expect_status", "expect_content_type", "expect_body", "expect_json", "compressed",
        "ws",
    ])]
    pub app: bool,

    /// The status every answer must have: a code such as 200, or 2xx.
    #[arg(long, default_value = "2xx")]
    pub expect_status: String,

    /// The Content-Type every answer must have. Without parameters only the
    /// media type is compared (text/plain accepts text/plain; charset=utf-8).
    #[arg(long)]
    pub expect_content_type: Option<String>,

    /// Every answer's body must be exactly this text.
    #[arg(long, conflicts_with = "expect_json")]
    pub expect_body: Option<String>,

    /// Every answer's body must be JSON equal to this document (key order and
    /// number spelling do not matter).
    #[arg(long)]
    pub expect_json: Option<String>,

    /// Ask for gzip (Accept-Encoding: gzip) and require it: every answer must
    /// say Content-Encoding: gzip and be valid gzip, else it counts as
    /// `encoding`; the body checks (--expect-body, --expect-json, --work) apply
    /// to the decoded answer. The bytes read are the compressed ones, so
    /// bytes per answer show the compression.
    #[arg(long)]
    pub compressed: bool,

    /// Exit with code 1 when failed attempts exceed this share of all
    /// attempts (0.01 = 1%).
    #[arg(long, default_value_t = 0.0)]
    pub max_error_rate: f64,

    /// Exit with code 1 when the measured median latency is above this
    /// (such as 1ms; a unit is required).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub slo_p50: Option<String>,

    /// Exit with code 1 when the measured p99 latency is above this (such
    /// as 5ms; a unit is required).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub slo_p99: Option<String>,

    /// Exit with code 1 when the measured p99.9 latency is above this
    /// (such as 20ms; a unit is required).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub slo_p999: Option<String>,

    /// Print the result as JSON (schema/load-result.v1.schema.json) instead of
    /// text.
    #[arg(long)]
    pub json: bool,

    /// No live progress line on stderr (it is shown only on a terminal anyway).
    #[arg(long)]
    pub quiet: bool,

    /// WebSocket echo instead of HTTP requests (CONTRACT.md, `ws`): each
    /// connection upgrades at the URL (http://host:port/ws or
    /// ws://host:port/ws), then sends one message at a time with a fresh
    /// random payload and checks its echo byte for byte. Counts messages
    /// where HTTP counts requests; -n, -R, -d, -c and --timeout apply to
    /// messages.
    #[arg(long, conflicts_with_all = [
        "method", "headers", "body", "body_file", "body_pool", "work", "pipeline",
        "no_keepalive", "expect_status", "expect_content_type", "expect_body", "expect_json",
        "compressed",
    ])]
    pub ws: bool,

    /// Payload bytes of each WebSocket message, 0 to 65536 (the contract's
    /// largest).
    #[arg(long, value_name = "BYTES", default_value_t = 64, requires = "ws",
          value_parser = clap::value_parser!(u32).range(0..=65536))]
    pub ws_message_size: u32,

    /// Binary WebSocket messages of random bytes instead of text messages of
    /// random ASCII letters.
    #[arg(long, requires = "ws")]
    pub ws_binary: bool,

    /// Source addresses for the connections, given out round-robin: ranges
    /// and lists such as 127.0.0.1-127.0.0.8 or 10.0.0.5,10.0.0.6. Each
    /// address has its own ephemeral ports to one target (about 28,000), so
    /// N addresses carry N times as many connections.
    #[arg(long, value_name = "ADDRS", value_parser = parse_source_arg)]
    pub source: Option<Sources>,

    /// Start at this wall-clock time: RFC 3339 (2026-11-24T12:00:00Z), Unix
    /// seconds, or +DURATION from now (+5s). Loads on several machines given
    /// the same time start together; then connect, warm up and measure.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    pub start_at: Option<std::time::SystemTime>,

    /// Also write the result as an HdrHistogram interval log over the
    /// measured window (latency and connect time, compressed V2) with one
    /// `#netbench` line of counts and verdict, for `netbench merge`.
    #[arg(long, value_name = "FILE")]
    pub histogram_out: Option<PathBuf>,

    /// The kernel interface of the workers: epoll (readiness, a system call
    /// per read and write), uring (io_uring: multishot receives into provided
    /// buffers, sends batched into one system call per loop turn; falls back
    /// to epoll with the reason where the kernel refuses it), or auto (the
    /// one measured cheaper on this kind of machine, see docs/guide/load.md).
    #[arg(long, value_enum, default_value = "auto")]
    pub io: IoArg,

    /// Client processes to split the connections over. Default: as many as
    /// the open-file limit needs (one if the connections fit one process).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub processes: Option<u32>,

    /// For https:// and wss://: trust the authorities in this PEM file
    /// instead of the system's (a private CA, or a self-signed certificate).
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,

    /// For https:// and wss://: accept any certificate for any name. The
    /// handshake's signatures are still checked, so it costs what a real
    /// one costs.
    #[arg(short = 'k', long, conflicts_with = "cacert")]
    pub insecure: bool,

    /// For https:// and wss://: resume TLS sessions on new connections;
    /// without it every connection makes a full handshake.
    #[arg(long)]
    pub tls_resume: bool,

    /// For https:// and wss://: the TLS versions offered.
    #[arg(long, value_enum, default_value = "any", value_name = "VERSION")]
    pub tls_version: TlsVersionArg,
}

/// `--tls-version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TlsVersionArg {
    /// 1.3 and 1.2; the server chooses.
    Any,
    #[value(name = "1.2")]
    V12,
    #[value(name = "1.3")]
    V13,
}

/// `--io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum IoArg {
    Auto,
    Epoll,
    Uring,
}

/// `--repetitions`: a count, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepetitionsArg {
    Count(u32),
    Auto,
}

fn parse_repetitions(s: &str) -> Result<RepetitionsArg, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(RepetitionsArg::Auto);
    }
    match s.parse::<u32>() {
        Ok(n @ 1..=1000) => Ok(RepetitionsArg::Count(n)),
        _ => Err(format!("`{s}` is not in 1..=1000 nor `auto`")),
    }
}

/// A `netbench load` command line's arguments, for the tests of the modules
/// that read them.
#[cfg(test)]
pub(crate) fn load_args(line: &str) -> LoadArgs {
    use clap::Parser;
    match Cli::try_parse_from(line.split_whitespace())
        .unwrap()
        .command
    {
        Command::Load(a) => *a,
        other => panic!("not a load command: {other:?}"),
    }
}
