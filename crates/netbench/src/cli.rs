//! Stage one of argument handling: what the user typed, parsed and range
//! checked by clap, with no system calls. `load::plan` turns it into a plan.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use netbench_report::{GateRules, GateSyntaxError};

use crate::durations::{parse_duration, positive_duration};
use crate::sources::{parse_source_arg, Sources};
use crate::start_at::parse_start_at;

const EXIT_CODES: &str = "\
Exit codes (each command's --help has its own):
  0    done: for load, within --max-error-rate and every --slo-*; for compare
       --fail-on, no row moved beyond the rules and beyond noise
  1    load: the error rate was above --max-error-rate or a latency missed its
       --slo-*; compare --fail-on: a regression, or nothing could be judged;
       run: a server was left out or a cell failed; verify: a check failed
  2    bad usage, or a failure that stopped the command (nothing measured)
  130  interrupted by Ctrl-C, SIGTERM or SIGHUP (the partial result is still printed)";

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
    /// its 95% interval, and whether it is significant.
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
}

const SITE_HELP: &str = "\
What is written (every page self-contained: styles, data and Chart.js inlined,
so the folder works offline, from a file:// URL or any static web host):
  index.html            every run (id, suite, date, host, kernel, commit, status),
                        the latest complete run of each suite with its composite
                        scores, the environment changes between runs, the servers
  runs/<RUN>.html       each run's report, as `netbench report` writes it
  servers/<NAME>.html   per server (servers/<NAME> in the repository): its
                        manifest facts and variants, its composite score, a
                        timeline per suite and test (median requests/s per run
                        with its 95% interval, a dashed line where the host, the
                        kernel or the commit changed), every figure, its builds
  netbench-site.json    the list of pages written (marks the folder as a site)

Composite score: per run, the geometric mean over its throughput cells of the
server's median over the cell's best median, with a 95% bootstrap interval
(each cell's repetitions resampled, seeded by the run's id: the same store
gives the same site). It is never shown without its interval; cells with
fewer than 2 good repetitions are not scored. See docs/site.md.

The folder must be new, empty, or an earlier site (its pages are replaced and
the ones no longer part of the site removed); --force writes into any folder,
replacing files of the same names and leaving the rest. The store is only read.

Exit codes:
  0    the site was written
  2    bad usage, no store or no runs in it, or a folder that is not a site
       (without --force) or cannot be written

Example:
  netbench site -o site && xdg-open site/index.html";

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

const MERGE_HELP: &str = "\
The merge is exact, not an average: counts and error kinds are summed, the
latency and connect-time histograms are added bucket by bucket and the
percentiles read from the sum, throughput is the good answers over the union of
the parts' measured windows (wall-clock time covered by at least one part), and
every part keeps its own client-bound verdict (the whole is flagged when any
part was). Start the parts with the same --start-at so their windows line up;
their clocks should be in sync (NTP).

Exit codes:
  0    the parts were merged
  2    bad usage, or a file that is missing, damaged or of another load
  130  a part was interrupted (the merge is still printed)

Examples:
  netbench load -c 5000 -d 30s --start-at 2026-11-24T12:00:00Z \\
      --histogram-out part-$(hostname).hlog http://10.0.0.1:8080/
  netbench merge part-*.hlog
  netbench merge --json part-*.hlog > merged.json";

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

const REPORT_HELP: &str = "\
Every report is rebuilt from the SQLite store alone, so it can be written again
(or in another format) at any time.

  html  one self-contained file (charts by Chart.js, inlined; works offline):
        environment, summary table, throughput with confidence intervals,
        latency spectrum p50..p99.99 per test, server CPU and memory, requests
        per server CPU-second, build time, artefact size, time to ready, and
        every flag next to the number it qualifies. Written to
        <db folder>/run-<RUN>/report.html unless -o is given; the path is printed.
  md    the summary table and the servers' table in Markdown, for a README.
  csv   long format: one row per repetition and metric (run, suite, test,
        connections, server, repetition, metric, unit, value).
  json  everything the HTML shows, as data (format netbench-report/1).
md, csv and json go to standard output unless -o is given.

Exit codes:
  0    the report was written
  2    bad usage, no such run, or the file could not be written

Examples:
  netbench report                 # the latest run, as HTML
  netbench report 3 --format md   # run 3's table in Markdown";

const COMPARE_HELP: &str = "\
For each cell (test, connections, server) in both runs, and for requests/s and
p99 latency: the medians of A and B, the change (median B / median A - 1), its
95% interval (Welch's t on the logarithms: wide with few repetitions, as it
should be), and the Mann-Whitney U test over the repetitions (two-sided,
exact for small samples): 'better' or
'worse' when p < 0.05, '~' when not. With 3 repetitions a side the smallest p
the test can give is 0.100, so nothing is called significant ('? too few'):
use `netbench run --repetitions 5` (or `repetitions = 5` in the suite) for runs
you mean to compare.

Two runs on a shared machine differ by more than the repetitions of one run
do: a host that drifted a few percent between them moves every server the same
way. So in each row (test and connections) with 4 or more servers in both
runs, requests/s and p99 are judged beyond the run-wide shift: each cell's B
figures are divided by the median change of the other servers in its row, and
the shift itself is printed above the tables. --absolute
compares the figures as measured (normalised by the CPU probe when both runs
carry it), for a change every server shares.

Regression gate (--fail-on RULES): comma-separated rules METRIC<-N% (fail on a
fall of more than N%) or METRIC>+N% (fail on a rise of more than N%), such as
'rps<-5%,p99>+10%'. METRIC is a short name or the comparison's JSON key:
  rps          requests_per_s              requests/s (higher is better)
  p99          latency_p99                 p99 latency (lower is better)
  idle_mem     idle_bytes_per_connection   idle memory per connection (lower)
  idle_cpu     idle_cpu_cores              idle CPU at the largest level (lower)
  storm        storm_all_done              storm: until every client is done (lower)
  knee         sweep_knee                  rate sweep: the knee (higher)
  cpu_per_req  fixed_rate_cpu_per_request  fixed rate: server CPU per request (lower)
A row fails a rule only when its change is beyond the threshold AND the test
above calls it significant ('better' or 'worse'), beyond the run-wide shift
unless --absolute: a threshold alone would fail on noise. A rule on an
improvement (rps>+50%) is allowed and catches a change too good to be true. A
cell with good repetitions in A and none in B fails the gate (its server
broke). Rows with too few repetitions (3 or fewer a side) are listed as not
judged; if no rule could judge a single row the gate fails, since a gate that
judged nothing cannot vouch for anything. When every server of a row moved
together beyond a rule, that is the run-wide shift (the machine, or a change
shared by all): the gate passes and says so; --absolute fails it.

A row must also be beyond its noise floor, printed per rule: the half-width
of an interval of its change from both runs' repetitions and the spread of
the shift it was judged beyond, at 5% split over every row judged, so an A/A
pair trips the gate at most one time in twenty however many rows it has.
compare's verdict alone took the shift as exact and each row at 5%: on a
shared 2-vCPU VM an A/A pair failed 2 of 16 rows by it. When the floor is
above a rule's threshold the gate still passes but says how large a change
it could not see. --noise-floor 25% never lets the floor fall below 25%
(the spread an A/A pair showed on the machine, for what one run's
repetitions cannot show, such as host drift in a row of fewer than 4
servers). --max-floor 20% fails the gate (exit 1) when a row's floor is
above 20%: it cannot see a 20% change there. The gate's
section follows the comparison (JSON: a `gate` object; HTML: a section at the
top); with -o or --format json its text also goes to stderr. See
docs/regression-gate.md.

Exit codes:
  0    the comparison was written; with --fail-on, no row moved beyond a rule
       and beyond noise
  1    --fail-on: a row moved beyond a rule and beyond noise, a cell measured in
       A has no good repetition in B, nothing could be judged, or (with
       --max-floor) a row's noise floor is above it (the comparison is still
       written)
  2    bad usage (a --fail-on rule that cannot be read, among others), no such
       run, or the file could not be written

Examples:
  netbench compare 1 2 --format html -o compare.html
  netbench compare 1 2 --fail-on 'rps<-5%,p99>+10%'
  netbench compare 1 2 --fail-on 'rps<-5%' --format html -o compare.html
  netbench compare 1 2 --fail-on 'rps<-5%,p99>+10%' --max-floor 20%";

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
    /// The baseline run.
    pub run_a: i64,
    /// The run compared against it.
    pub run_b: i64,
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

const RUN_HELP: &str = "\
Suites (suites/*.toml): standard (every server warm, blank and work at 100
connections, 2 repetitions; what `make run` runs, about 25 minutes here),
quick (every server at 1 and 100 connections, short runs, 1 repetition), full
(the whole matrix), beyond (idle cost, storms, keep-alive off, latency against
load, CPU per request), models, allocators, backends (PostgreSQL, WebSocket),
lan (loopback and a network namespace), stress (exactly 100,000 blank requests
over 1 to 1,000 connections), aa (four servers twice over for an A/A check of
compare), gate (five servers, 5 repetitions: for `compare --fail-on` in CI). A
path to any suite file works too.

Each server is built once (skipped while its sources are unchanged), started
fresh for every measurement (or, with a suite's [warmup] process = round, for
each round of its cells) in its own process tree on a free port, pinned to CPUs
apart from the client's, sampled from /proc at 10 Hz, and stopped (SIGTERM,
then SIGKILL of the whole tree). With [warmup] until = steady each cell first
loads the server in short windows until its throughput settles
(docs/steady-state.md). Repetitions are interleaved across servers. A server that cannot build, never gets ready or fails verify is left
out with its reason; a cell whose server crashes is recorded as failed; the
run goes on either way. Ctrl-C, SIGTERM or SIGHUP stops the run cleanly (finished
cells are kept); `netbench run --resume RUN` finishes it.

Exit codes:
  0    the run completed, every server took part and every cell succeeded
  1    the run completed, but a server was left out or a cell failed
  2    bad usage, or netbench itself failed (the store, the placement)
  130  interrupted by Ctrl-C, SIGTERM or SIGHUP; resume it with --resume";

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

const VERIFY_HELP: &str = "\
Checks: blank, echo, not-found, work (random documents, fresh each run unless --seed),
work-content-type, split-request, chunked-request, bad-json, missing-field, wrong-type,
empty-dates, bad-date, keep-alive, framing, date. With --ws: ws-handshake, ws-echo,
ws-fragmented, ws-ping, ws-close, ws-unmasked. See contract/CONTRACT.md.

Exit codes:
  0    every check passed (warnings allowed)
  1    at least one check failed
  2    bad usage

Example:
  netbench verify http://127.0.0.1:1234/";

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

    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

const LOAD_HELP: &str = "\
Load models:
  closed loop, timed       -d 10s             (the default)
  closed loop, exact count -n 100000          spread over the connections; every
                                              attempt ends as an answer or an error
  open loop                -R 20000 [-d|-n]   latency counts from each request's
                                              intended send time (no coordinated omission)

Every answer is checked (status, and optionally Content-Type and body); failures are
counted by kind: connect, read, write, timeout, status, content_type, body, malformed,
closed_early. Each result ends with a verdict line saying whether the client was the
bottleneck, with its evidence (client CPU, event-loop busy share, connections in flight
or the share of the target rate reached).

WebSocket (--ws): every connection upgrades once, then each message (64 bytes unless
--ws-message-size says otherwise, text unless --ws-binary) carries a fresh random payload
and its echo is compared byte for byte; a ping from the server gets its pong. Failures add
three kinds: ws_handshake (no 101 or a wrong one; once per connection attempt),
ws_protocol (a frame against RFC 6455) and ws_echo_mismatch.

Body pool (--body-pool FILE): one JSON object per line, sent round-robin, each with its
own expected answer. Keys: \"body\" (text) or \"body_json\" (any JSON, sent compact, with
Content-Type: application/json unless -H sets one); optional \"expect_status\",
\"expect_content_type\", and \"expect_body\" (text) or \"expect_json\" (JSON-equal).
Options given on the command line apply to lines that do not set their own.

Service-level objectives: --slo-p50, --slo-p99 and --slo-p999 take a latency (250us, 5ms,
1s; a unit is required) that the measured percentile must not exceed; each one missed is
printed on stderr with the margin (\"p99 latency 7.31ms is above --slo-p99 5ms by 2.31ms
(+46.2%)\"). A run without a good answer has no percentile, and misses every SLO given.

Exit codes:
  0    the run completed, its error rate was within --max-error-rate and every --slo-*
       given was met
  1    the run completed but its error rate was above --max-error-rate, or a measured
       percentile was above its --slo-* (both are checked and printed)
  2    bad usage (a zero, negative or unitless --slo-*, among others), or a failure that
       stopped the run (nothing measured)
  130  interrupted by Ctrl-C, SIGTERM or SIGHUP (the partial result is still printed;
       no SLO is judged)

Many connections: one process holds as many connections as its open-file limit allows
(the hard limit less a reserve); beyond that the load runs in child processes, each with
its own limit, started together and merged exactly (--processes sets the count). One
source address reaches one target from at most the ephemeral port range (about 28,000);
--source 127.0.0.1-127.0.0.8 spreads connections over several.

Several machines: give each the same --start-at and a --histogram-out file, then
`netbench merge` the files (see `netbench merge --help`).

Examples:
  netbench load -c 100 -d 10s http://127.0.0.1:8080/blank
  netbench load -c 100 -d 30s --slo-p99 5ms --max-error-rate 0.01 http://127.0.0.1:8080/blank
  netbench load -c 1000 -n 100000 --expect-body OK http://127.0.0.1:8080/
  netbench load -R 20000 -c 200 -d 30s --warmup 5s --json http://[::1]:8080/
  netbench load -c 100 -d 10s --work 1000 http://127.0.0.1:1234/work
  netbench load --ws -c 100 -d 10s --ws-message-size 1024 ws://127.0.0.1:1234/ws
  netbench load -c 100000 -d 30s --warmup 10s --source 127.0.0.1-127.0.0.8 http://127.0.0.1:8080/";

#[derive(Debug, Args)]
pub(crate) struct LoadArgs {
    /// The target: http://host[:port]/path?query. IPv6 literals go in brackets;
    /// a host name is resolved once, before the run.
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

    /// Seed of the generated work documents (printed with the result).
    /// Default: a new one each run.
    #[arg(long, requires = "work")]
    pub seed: Option<u64>,

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
