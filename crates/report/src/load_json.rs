//! The versioned JSON form of a load result. Its shape is fixed by
//! schema/load-result.v1.schema.json; change both together and bump the
//! version when a key changes meaning or disappears.

use netbench_engine::{LatencySummary, LoadResult, Pacing, Stop};
use serde_json::{json, Map, Value};

use crate::load_context::LoadContext;

pub const LOAD_SCHEMA_VERSION: u32 = 1;

fn latency_us(s: &LatencySummary) -> Value {
    let us = |ns: f64| ns / 1e3;
    json!({
        "min": us(s.min_ns),
        "mean": us(s.mean_ns),
        "stdev": us(s.stdev_ns),
        "p50": us(s.p50_ns),
        "p90": us(s.p90_ns),
        "p99": us(s.p99_ns),
        "p999": us(s.p999_ns),
        "p9999": us(s.p9999_ns),
        "max": us(s.max_ns),
    })
}

pub fn load_json(ctx: &LoadContext<'_>, r: &LoadResult) -> Value {
    let plan = ctx.plan;
    let errors: Map<String, Value> = r
        .errors
        .iter()
        .map(|(k, n)| (k.name().to_string(), json!(n)))
        .collect();
    let stop = match plan.stop {
        Stop::After(d) => json!({ "duration_s": d.as_secs_f64() }),
        Stop::Count(n) => json!({ "requests": n }),
    };
    let rate_setting = match plan.pacing {
        Pacing::Closed => Value::Null,
        Pacing::Open { per_second } => json!(per_second),
    };
    let ws = plan.ws.as_ref().map_or(
        Value::Null,
        |ws| json!({ "path": ws.path, "message_size": ws.message_size, "binary": ws.binary }),
    );
    let rate = r.rate.map_or(
        Value::Null,
        |r| json!({ "target": r.target_per_s, "achieved": r.achieved_per_s, "ratio": r.ratio }),
    );
    json!({
        "schema_version": LOAD_SCHEMA_VERSION,
        "tool": concat!("netbench ", env!("CARGO_PKG_VERSION")),
        "target": {
            "url": ctx.url,
            "method": ctx.method,
            "address": plan.addr.to_string(),
        },
        "settings": {
            "connections": plan.connections,
            "workers": plan.workers,
            "keepalive": plan.keepalive,
            "pipeline": plan.pipeline,
            // What carried the requests; an HTTP/2 run's `pipeline` is its
            // streams per connection.
            "protocol": match (plan.h2, plan.tls.is_some()) {
                (true, true) => "h2",
                (true, false) => "h2c",
                (false, true) => "tls",
                (false, false) => "h1",
            },
            "warmup_s": plan.warmup.as_secs_f64(),
            "timeout_s": plan.timeout.as_secs_f64(),
            "stop": stop,
            "rate": rate_setting,
            "distinct_requests": ctx.distinct_requests,
            "work": ctx.work.map_or(Value::Null, |w| json!({
                "documents": w.documents,
                "dates": w.dates,
                "seed": w.seed,
            })),
            "ws": ws,
        },
        // What requests, attempts and rps count: a WebSocket run's "requests"
        // are messages whose echo was checked.
        "unit": if plan.ws.is_some() { "messages" } else { "requests" },
        "interrupted": r.interrupted,
        "requests": r.requests,
        "attempts": r.attempts(),
        "duration_s": r.duration_s,
        "rps": r.rps,
        "latency_us": latency_us(&r.latency),
        "connect_us": latency_us(&r.connect),
        "connects": r.connects,
        "tls": r.tls.as_ref().map_or(Value::Null, |t| json!({
            "version": t.version,
            "cipher": t.cipher,
            "alpn": t.alpn,
            "handshakes": t.handshake.count,
            "resumed": t.resumed,
            "handshake_us": latency_us(&t.handshake),
            "resume": t.resume,
            "insecure": t.insecure,
        })),
        "errors": errors,
        "error_rate": r.error_rate(),
        "bytes": {
            "read": r.bytes_read,
            "written": r.bytes_written,
            "read_measured": r.measured_bytes_read,
        },
        "client": {
            "cpu_s": r.client_cpu_s,
            "cpu_us_per_request": r.cpu_us_per_request(),
            "process_cpu_s": r.process_cpu_s,
            "io": r.io.name(),
            "io_fallback": r.io_fallback,
            "workers": r.workers,
        },
        "concurrency": {
            // Connections × streams: what a client that keeps every stream
            // busy holds in flight (HTTP/1.1: the connections).
            "configured": r.configured_connections * plan.streams_per_connection(),
            "connections": r.configured_connections,
            "streams": plan.streams_per_connection(),
            "achieved": r.achieved_concurrency,
        },
        "rate": rate,
        "verdict": {
            "client_bound": r.verdict.client_bound,
            "judged": r.verdict.judged,
            "reasons": r.verdict.reasons,
            "busiest_cpu": r.verdict.busiest_cpu,
            "busiest_loop": r.verdict.busiest_loop,
        },
        "window_unix_ns": r.window_unix_ns,
        "connections_answered": r.connections_answered,
        "unfinished": {
            "requests": r.unfinished.requests,
            "oldest_s": r.unfinished.oldest_s,
            "stalled": r.stalled_at_end(),
        },
        "memory": {
            "peak_rss_bytes": r.memory.peak_rss_bytes,
            "run_growth_bytes": r.memory.run_growth_bytes,
            "processes": r.memory.processes,
            "bytes_per_connection": r.memory.per_connection(r.configured_connections),
        },
        "parts": r.parts.iter().map(|p| json!({
            "label": p.label,
            "connections": p.connections,
            "requests": p.requests,
            "errors": p.errors,
            "rps": p.rps,
            "window_unix_ns": p.window_unix_ns,
            "connections_answered": p.connections_answered,
            "peak_rss_bytes": p.peak_rss_bytes,
            "client_bound": p.verdict.client_bound,
            "judged": p.verdict.judged,
            "reasons": p.verdict.reasons,
        })).collect::<Vec<_>>(),
    })
}
