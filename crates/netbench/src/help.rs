//! The long texts of `--help`: what each command does, its exit codes and
//! examples, kept apart from the argument definitions in `cli.rs`.

pub(crate) const EXIT_CODES: &str = "\
Exit codes (each command's --help has its own):
  0    done: for load, within --max-error-rate and every --slo-*; for compare
       --fail-on, no row moved beyond the rules and beyond noise
  1    load: nothing was answered, the error rate was above --max-error-rate or a
       latency missed its --slo-*; compare --fail-on: a regression, or nothing could be judged;
       run: a server was left out or a cell failed; verify: a check failed;
       attack: not one connection could be opened
  2    bad usage, or a failure that stopped the command (nothing measured);
       attack: also a target that is not a loopback address
  130  interrupted by Ctrl-C, SIGTERM or SIGHUP (the partial result is still printed)";

pub(crate) const SITE_HELP: &str = "\
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

pub(crate) const MERGE_HELP: &str = "\
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

pub(crate) const REPORT_HELP: &str = "\
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
        protocol, connections, server, repetition, metric, unit, value).
  json  everything the HTML shows, as data (format netbench-report/2).
md, csv and json go to standard output unless -o is given.

Exit codes:
  0    the report was written
  2    bad usage, no such run, or the file could not be written

Examples:
  netbench report                 # the latest run, as HTML
  netbench report 3 --format md   # run 3's table in Markdown";

pub(crate) const COMPARE_HELP: &str = "\
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

Paired A/B (--pair A B, with one run): two variants of a server measured in
the same run (two commits, two allocators, two flags), compared row by row by
their paired ratio: B / A in every round where both have a figure, the median
of those ratios with its bootstrap 95% interval (5 or more rounds). A slow
round of the host slows both alike and leaves the ratio alone, which makes
this the way to gate a change on a noisy machine. With --fail-on, a row fails
a rule such as rps<-5% when the interval of its change lies wholly below 0
(a fall is shown) and reaches below -5% (a fall of 5% is not ruled out): it
passes when no fall is shown, or the fall is shown smaller than 5%. The
metrics are rps, p99 and cpu_per_req (a fixed-rate row's server CPU per
request). Rows where A has good rounds and B none fail the gate; a row of
fewer than 5 rounds with both is not judged, and a gate that judged nothing
fails. Text or JSON (a `gate` object) only. See docs/regression-gate.md.

Exit codes:
  0    the comparison was written; with --fail-on, no row moved beyond a rule
       and beyond noise
  1    --fail-on: a row moved beyond a rule and beyond noise, a cell measured in
       A has no good repetition in B (with --pair: a row of A with no round
       of B), nothing could be judged, or (with --max-floor) a row's noise
       floor is above it (the comparison is still written)
  2    bad usage (a --fail-on rule that cannot be read, --pair naming a
       server the run does not have, among others), no such run, or the file
       could not be written

Examples:
  netbench compare 7 --pair rust-hyper rust-hyper:slow --fail-on 'rps<-5%'
  netbench compare 1 2 --format html -o compare.html
  netbench compare 1 2 --fail-on 'rps<-5%,p99>+10%'
  netbench compare 1 2 --fail-on 'rps<-5%' --format html -o compare.html
  netbench compare 1 2 --fail-on 'rps<-5%,p99>+10%' --max-floor 20%";

pub(crate) const RUN_HELP: &str = "\
Suites (suites/*.toml): standard (every server warm, blank and work at 100
connections, 2 repetitions; what `make run` runs, about 25 minutes here),
quick (every server at 1 and 100 connections, short runs, 1 repetition), full
(the whole matrix), beyond (idle cost, storms, keep-alive off, latency against
load, CPU per request), models, allocators, backends (PostgreSQL, WebSocket),
lan (loopback and a network namespace), stress (exactly 100,000 blank requests
over 1 to 1,000 connections), aa (four servers twice over for an A/A check of
compare), gate (five servers, 5 repetitions: for `compare --fail-on` in CI),
apps (the servers offering the contract's application parts: static files,
uploads, gzip, fortunes, queries, updates), protocols (TLS, HTTP/2, h2c and gRPC on
the servers that offer them, each against its own HTTP/1.1, and TLS handshake storms),
threads (1, 2 and 4 worker threads of c-h2o, cpp-beast and java-jdk with TCP_NODELAY).
A path to any suite file works too.

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

pub(crate) const VERIFY_HELP: &str = "\
Checks: blank, echo, not-found, work (random documents, fresh each run unless --seed),
work-content-type, split-request, chunked-request, bad-json, missing-field, wrong-type,
empty-dates, bad-date, keep-alive, framing, date. With --ws: ws-handshake, ws-echo,
ws-fragmented, ws-ping, ws-close, ws-unmasked. With --static: static-content,
static-length, static-headers, static-304. With --upload: upload-digest, upload-early,
upload-too-large. With --json-comp: json-comp-gzip, json-comp-plain, json-comp-br.
With --database-url and --fortunes: fortunes-page, fortunes-escaped, fortunes-follows;
--queries: queries-rows, queries-clamp, queries-follows; --updates: updates-rows,
updates-written. With --app: app-session, app-page, app-gzip, app-ids, app-lock,
app-logout, app-errors. With --tls-port PORT --cacert FILE: tls (and h2 with --h2);
--h2c-port PORT: h2c; --grpc-port PORT: grpc-compute, grpc-invalid. These drive
netbench's own load engine against each listener, so they check what a run's cells will.
See contract/CONTRACT.md.

HTTP/1.1 conformance (a score, never a failure): --conformance adds 32 RFC 9112/9110
cases sent as raw bytes (Content-Length with Transfer-Encoding, two Content-Lengths,
obs-fold, bare LF and CR, a space before the colon, Host missing or doubled, bad chunk
sizes and extensions, a 2 MiB target and header block, HTTP/1.0 with and without
keep-alive, Expect: 100-continue, pipelining in order, HEAD, absolute-form, ...): the
score and each failed case with its RFC section and what came back. --conformance-only
runs the probes alone against any HTTP/1.1 server (nginx, your own), on --path (default
the URL's path, else /): a cheap GET that answers below 400. See docs/guide/verify.md.

Exit codes:
  0    every check passed (warnings allowed); with --conformance-only: the probes ran
  1    at least one check failed (conformance cases never count)
  2    bad usage, or with --conformance-only a server that cannot be reached

Examples:
  netbench verify http://127.0.0.1:1234/
  netbench verify --conformance http://127.0.0.1:1234/
  netbench verify --conformance-only --path /index.html http://127.0.0.1:8080/";

pub(crate) const LOAD_HELP: &str = "\
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

TLS (https://, wss://): rustls, TLS 1.3 or 1.2, offering ALPN http/1.1 and sending the
host as SNI. Certificates are checked against the system's authorities unless --cacert
FILE or --insecure says otherwise. Handshake time (from the connect to the handshake's
end) is reported apart from request latency, with how many handshakes resumed
(--tls-resume). Failures add five kinds, each once per connection attempt: tls_untrusted
(no trusted authority signed the certificate: --cacert or --insecure), tls_name (the
certificate is for other names), tls_expired, tls_alert (the server refused: no common
version, cipher or ALPN protocol) and tls_protocol (not TLS, or closed mid-handshake).

HTTP/2 (--h2 on an https:// URL, ALPN h2 alone; --h2c on http://, prior knowledge): each
request is a stream, --streams N of them in flight per connection (h2load's -m), each
answer checked as HTTP/1.1's are. -c is still TCP connections: -c 100 --streams 10 keeps up
to 1,000 requests in flight. Latency is per stream, from its HEADERS (or its intended send
time) to the end of its answer. --grpc sends the contract's netbench.Work/Compute calls
(contract/grpc/work.proto) over h2c, or h2 on https://: each reply is compared with its own
document's, and its grpc-status must be 0. Failures add five kinds: h2_protocol (the
server broke HTTP/2; the connection ends with GOAWAY), h2_reset (the stream was reset),
h2_goaway (the stream was above the last one the server's GOAWAY took), grpc_status, and
h2_flood (the server sent PING or SETTINGS faster than it read the answers: more than
1,000 owed at once; the connection ends with GOAWAY ENHANCE_YOUR_CALM).

Compressed answers (--compressed): sends Accept-Encoding: gzip and requires gzip back;
an answer without Content-Encoding: gzip, not valid gzip, or inflating past 256 KiB
counts as encoding. Body checks apply to the decoded answer.

The contract's app (--app, the URL the server's root): every connection is a browser.
Its first page (GET /app?page=K, gzip asked for) makes a session and keeps the server's
Set-Cookie; the next 19 send the cookie; the 21st request is POST /app/logout, and the
page after it starts a new session. Every page is checked whole (its 50 rows escaped,
contract/app's stylesheet and script) and against the one before: visits one more, since
and the cookie the same. A page that breaks its session counts as session.

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
  0    the run completed, something was answered, its error rate was within
       --max-error-rate and every --slo-* given was met
  1    the run completed but nothing was answered or failed while measuring (every
       request was still in flight at the end), its error rate was above
       --max-error-rate, or a measured percentile was above its --slo-* (each is
       checked and printed)
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
  netbench load -c 100 -d 10s --cacert ca.pem https://localhost:8443/
  netbench load --h2 --streams 10 -c 100 -d 10s --cacert ca.pem https://localhost:8443/
  netbench load --grpc --streams 10 -c 100 -d 10s http://127.0.0.1:8082/
  netbench load -c 100000 -d 30s --warmup 10s --source 127.0.0.1-127.0.0.8 http://127.0.0.1:8080/";

pub(crate) const ATTACK_HELP: &str = "\
Every attack goes only to a loopback address (127.0.0.0/8, ::1, or a name that
resolves only to those): any other target is refused (exit 2) before a socket
is opened. It holds at most --connections connections (held kinds: 65536;
floods: 1024; fewer if the open-file limit, raised to its hard limit, is
lower), stops by itself after --for, and stops within about 0.1 s on Ctrl-C,
SIGTERM or SIGHUP, closing every connection.

Attacks:
  slowloris   each connection sends a request head a byte per --interval and
              never finishes it; a connection the server closes is reopened
  slow-read   each connection sends a keep-alive GET for --path (/static/1m)
              with a receive buffer of about 2 KiB and reads the answer a byte
              per --interval, so the server's send buffers fill
  malformed   a rotating set of broken requests (request lines, header syntax,
              obs-fold, bare LF, missing Host, bad chunk sizes, conflicting
              Content-Lengths, binary garbage), each answer read, as fast as
              the connections allow; reopened when the server closes
  oversized   requests with a 64 KiB or 1 MiB request line, a 256 KiB header,
              or 1 MiB of headers, as fast as the connections allow
  conn-flood  opens the connections as fast as it can and holds them idle
              (never sends), reopening any the server closes
  tcp-frag    complete GETs for --path (/blank) written a byte per TCP segment
              (TCP_NODELAY, MSS 88, 1 ms apart), each answer read

Summary (one line, or with --json one object; docs/guide/attack.md):
  {\"kind\", \"connections\", \"connections_opened\", \"closed_by_server\",
   \"requests_sent\", \"answers\": {\"2xx\", \"4xx\", \"5xx\", \"other\"},
   \"bytes_sent\", \"bytes_received\",
   \"errors\": {\"connect\", \"reset\", \"timeout\", \"other\"}, \"seconds\"}

Exit codes:
  0    the attack ran until --for (the summary is printed)
  1    not one connection could be opened during the whole attack (nothing
       listening?); the summary is printed
  2    bad usage: an unknown attack, a bound out of range, a URL that is not
       http:// or not loopback
  130  stopped by Ctrl-C, SIGTERM or SIGHUP (the summary is printed)

Examples:
  netbench attack slowloris http://127.0.0.1:8080/ -c 500 --for 30s
  netbench attack slow-read http://127.0.0.1:8080/ -c 50 --for 30s --interval 500ms
  netbench attack malformed http://127.0.0.1:8080/ -c 8 --for 10s --json";
