//! The human summary of a load result, in the spirit of wrk's: the numbers
//! first, then the evidence that the client kept up. A WebSocket run counts
//! messages where an HTTP run counts requests.

use std::io::{self, Write};

use netbench_engine::{ErrorKind, LatencySummary, LoadResult, Pacing, Stop};

use crate::format::{bytes, format_duration_ns as d, thousands, verdict_line};
use crate::load_context::LoadContext;

/// What each TLS failure means and what to do about it, printed beside its
/// count.
const TLS_HINTS: [(ErrorKind, &str); 5] = [
    (
        ErrorKind::TlsUntrusted,
        "no trusted authority signed the server's certificate; give its CA with --cacert FILE, or --insecure",
    ),
    (
        ErrorKind::TlsName,
        "the certificate is for other names than the URL's host; use a name it carries in the URL",
    ),
    (
        ErrorKind::TlsExpired,
        "the certificate has expired or is not valid yet; renew it, or check both machines' clocks",
    ),
    (
        ErrorKind::TlsAlert,
        "the server refused the handshake (no common TLS version, cipher suite or ALPN protocol); check --tls-version and the server's TLS settings",
    ),
    (
        ErrorKind::TlsProtocol,
        "what came was not TLS, or the connection closed mid-handshake; check that the port speaks TLS",
    ),
];

/// What an encoding failure means, printed beside its count.
const ENCODING_HINT: &str = "gzip was asked for (--compressed, or the json-comp endpoint) and the answer \
    was not gzip: no Content-Encoding: gzip, a body that is not valid gzip, or one that inflates past 256 KiB";

/// What a session failure means, printed beside its count.
const SESSION_HINT: &str = "a page of the app broke its browser's session: no single valid \
    Set-Cookie on a new session, another cookie later, visits not one more than the page before \
    (another session's counter, or none kept), or since moved";

fn latency_lines(out: &mut impl Write, label: &str, s: &LatencySummary) -> io::Result<()> {
    writeln!(
        out,
        "  {label:<12} min {}  mean {}  stdev {}  max {}",
        d(s.min_ns),
        d(s.mean_ns),
        d(s.stdev_ns),
        d(s.max_ns)
    )?;
    writeln!(
        out,
        "  {:<12} p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}",
        "",
        d(s.p50_ns),
        d(s.p90_ns),
        d(s.p99_ns),
        d(s.p999_ns),
        d(s.p9999_ns)
    )
}

pub fn write_load_text(
    out: &mut impl Write,
    ctx: &LoadContext<'_>,
    r: &LoadResult,
) -> io::Result<()> {
    let plan = ctx.plan;
    // What one attempt is: a request, or a WebSocket message and its echo.
    let (unit, one, short) = match plan.ws {
        Some(_) => ("messages", "message", "msg/s"),
        None => ("requests", "request", "req/s"),
    };
    let model = match (plan.pacing, plan.stop) {
        (Pacing::Closed, Stop::After(t)) => format!("closed loop for {:.3?}", t),
        (Pacing::Closed, Stop::Count(n)) => format!("closed loop, {} {unit}", thousands(n)),
        (Pacing::Open { per_second }, Stop::After(t)) => {
            format!("open loop at {per_second} {short} for {:.3?}", t)
        }
        (Pacing::Open { per_second }, Stop::Count(n)) => {
            format!("open loop at {per_second} {short}, {} {unit}", thousands(n))
        }
    };
    let what = match &plan.ws {
        Some(ws) => format!(
            "{} B {} messages, one at a time per connection, each echo checked",
            ws.message_size,
            if ws.binary { "binary" } else { "text" }
        ),
        None if plan.h2 => format!(
            "HTTP/2 {}, {} stream{} per connection",
            if plan.tls.is_some() {
                "over TLS (h2)"
            } else {
                "cleartext (h2c)"
            },
            plan.pipeline,
            if plan.pipeline == 1 { "" } else { "s" }
        ),
        None if plan.keepalive => "keep-alive".to_string(),
        None => "a new connection per request".to_string(),
    };
    let name = if plan.ws.is_some() {
        "WebSocket"
    } else {
        ctx.method
    };
    writeln!(out, "{name} {} ({model})", ctx.url)?;
    writeln!(
        out,
        "  {} connections on {} {} worker{}, {what}{}{}",
        plan.connections,
        plan.workers,
        r.io.name(),
        if plan.workers == 1 { "" } else { "s" },
        // HTTP/2's streams are in `what`; HTTP/1.1's pipeline here.
        if plan.pipeline > 1 && !plan.h2 {
            format!(", pipeline {}", plan.pipeline)
        } else {
            String::new()
        },
        if plan.warmup.is_zero() {
            String::new()
        } else {
            format!(", {:.3?} warm-up dropped", plan.warmup)
        },
    )?;
    if let Some(w) = ctx.work {
        writeln!(
            out,
            "  work test: {} generated documents of {} dates, seed {}, each answer checked",
            w.documents, w.dates, w.seed
        )?;
    }
    if let Some(why) = &r.io_fallback {
        writeln!(out, "  {:<12} io_uring not used: {why}; ran on epoll", "io")?;
    }
    if r.interrupted {
        writeln!(
            out,
            "  INTERRUPTED: the numbers below cover only the time that ran"
        )?;
    }
    writeln!(
        out,
        "  {:<12} {} good, {} errors ({:.2}%) in {:.3}s",
        unit,
        thousands(r.requests),
        thousands(r.errors.total()),
        r.error_rate() * 100.0,
        r.duration_s
    )?;
    if r.stalled_at_end() {
        // Neither good nor errors: said apart, so a stall at the end of a
        // run is never read as "0 errors" (issue 42).
        writeln!(
            out,
            "  {:<12} {} {} still in flight at the end, the oldest waiting {:.2}s{}",
            "unfinished",
            thousands(r.unfinished.requests),
            if r.unfinished.requests == 1 {
                one
            } else {
                unit
            },
            r.unfinished.oldest_s,
            if r.requests == 0 {
                ": nothing was answered"
            } else {
                ", longer than any answer took"
            }
        )?;
    }
    writeln!(out, "  {:<12} {:.1} {unit}/s", "throughput", r.rps)?;
    latency_lines(out, "latency", &r.latency)?;
    if r.connects > 0 {
        writeln!(
            out,
            "  {:<12} {} connections made while measuring",
            "connect",
            thousands(r.connects)
        )?;
        latency_lines(out, "", &r.connect)?;
    }
    if let Some(t) = &r.tls {
        let agreed = if t.version.is_empty() {
            "no handshake finished".to_string()
        } else {
            format!(
                "{} {}{}",
                t.version,
                t.cipher,
                t.alpn
                    .as_deref()
                    .map(|a| format!(", ALPN {a}"))
                    .unwrap_or_default()
            )
        };
        writeln!(
            out,
            "  {:<12} {agreed}{}; {} handshakes while measuring, {} resumed{}",
            "tls",
            if t.insecure {
                ", certificate not checked (--insecure)"
            } else {
                ""
            },
            thousands(t.handshake.count),
            thousands(t.resumed),
            if t.resume { "" } else { " (resumption off)" }
        )?;
        if t.handshake.count > 0 {
            latency_lines(out, "", &t.handshake)?;
        }
    }
    for (kind, what) in TLS_HINTS {
        let n = r.errors.get(kind);
        if n > 0 {
            writeln!(
                out,
                "  {:<12} {} connection{}: {what}",
                kind.name(),
                thousands(n),
                if n == 1 { "" } else { "s" }
            )?;
        }
    }
    let encoding = r.errors.get(ErrorKind::Encoding);
    if encoding > 0 {
        writeln!(
            out,
            "  {:<12} {} answer{}: {ENCODING_HINT}",
            ErrorKind::Encoding.name(),
            thousands(encoding),
            if encoding == 1 { "" } else { "s" }
        )?;
    }
    let session = r.errors.get(ErrorKind::Session);
    if session > 0 {
        writeln!(
            out,
            "  {:<12} {} page{}: {SESSION_HINT}",
            ErrorKind::Session.name(),
            thousands(session),
            if session == 1 { "" } else { "s" }
        )?;
    }
    let handshakes = r.errors.get(ErrorKind::WsHandshake);
    if handshakes > 0 {
        writeln!(
            out,
            "  {:<12} {} connection{} failed the WebSocket upgrade (no 101, or a wrong one)",
            "handshake",
            thousands(handshakes),
            if handshakes == 1 { "" } else { "s" }
        )?;
    }
    if r.errors.total() > 0 {
        let kinds: Vec<String> = r
            .errors
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{} {}", k.name(), thousands(n)))
            .collect();
        writeln!(out, "  {:<12} {}", "errors", kinds.join(", "))?;
    }
    let per_worker: Vec<String> = r
        .workers
        .iter()
        .map(|w| {
            let share = if w.wall_s > 0.0 {
                w.cpu_s / w.wall_s * 100.0
            } else {
                0.0
            };
            format!(
                "{:.2}s ({share:.0}%, loop busy {:.0}%)",
                w.cpu_s,
                w.loop_busy * 100.0
            )
        })
        .collect();
    writeln!(
        out,
        "  {:<12} {:.2}s CPU, {:.2}µs per {one}; per worker: {}",
        "client",
        r.client_cpu_s,
        r.cpu_us_per_request(),
        per_worker.join(", ")
    )?;
    match r.rate {
        // A run that ended by its count stopped when the count was done,
        // not after the time the rate was set for: no share of it is
        // comparable (`-R 10 -n 3` showed 180%).
        Some(rate) if matches!(ctx.plan.stop, Stop::Count(_)) => writeln!(
            out,
            "  {:<12} {:.1} {unit}/s asked; not compared: the run ended by its count, {:.1} in flight on average",
            "rate",
            rate.target_per_s,
            r.achieved_concurrency
        )?,
        Some(rate) => writeln!(
            out,
            "  {:<12} {:.1} of {:.1} {unit}/s ({:.1}%), {:.1} in flight on average",
            "rate",
            rate.achieved_per_s,
            rate.target_per_s,
            rate.ratio * 100.0,
            r.achieved_concurrency
        )?,
        // HTTP/2 keeps every stream busy: the configured concurrency is
        // connections × streams.
        None if plan.streams_per_connection() > 1 => writeln!(
            out,
            "  {:<12} {:.1} of {} streams ({} connections × {}) in flight on average, {} connections answered while measuring",
            "concurrency",
            r.achieved_concurrency,
            r.configured_connections * plan.streams_per_connection(),
            r.configured_connections,
            plan.streams_per_connection(),
            thousands(r.connections_answered)
        )?,
        None => writeln!(
            out,
            "  {:<12} {:.1} of {} connections in flight on average, {} answered while measuring",
            "concurrency",
            r.achieved_concurrency,
            r.configured_connections,
            thousands(r.connections_answered)
        )?,
    }
    if r.memory.peak_rss_bytes > 0 {
        let m = r.memory;
        writeln!(
            out,
            "  {:<12} peak {}{}, {} more during the run ({:.0} B per connection)",
            "memory",
            bytes(m.peak_rss_bytes),
            if m.processes > 1 {
                format!(" over {} processes", m.processes)
            } else {
                String::new()
            },
            bytes(m.run_growth_bytes),
            m.per_connection(r.configured_connections)
        )?;
    }
    write_parts(out, r, short)?;
    writeln!(out, "{}", verdict_line(&r.verdict))
}

/// A merged result's parts, one line each, with their windows on the wall
/// clock relative to the earliest.
fn write_parts(out: &mut impl Write, r: &LoadResult, short: &str) -> io::Result<()> {
    if r.parts.is_empty() {
        return Ok(());
    }
    let first = r
        .parts
        .iter()
        .map(|p| p.window_unix_ns[0])
        .min()
        .unwrap_or(0);
    let at = |ns: u64| ns.saturating_sub(first) as f64 / 1e9;
    writeln!(
        out,
        "  {:<12} {} merged exactly (histograms added; throughput over the union of their windows)",
        "parts",
        r.parts.len()
    )?;
    for p in &r.parts {
        writeln!(
            out,
            "    {}: {} connections, {} good, {} errors, {:.1} {short}, window +{:.3}s to +{:.3}s, {}",
            p.label,
            thousands(p.connections as u64),
            thousands(p.requests),
            thousands(p.errors),
            p.rps,
            at(p.window_unix_ns[0]),
            at(p.window_unix_ns[1]),
            match (p.verdict.judged, p.verdict.client_bound) {
                (false, _) => "client-bound not judged",
                (true, true) => "CLIENT-BOUND",
                (true, false) => "not client-bound",
            }
        )?;
    }
    Ok(())
}
