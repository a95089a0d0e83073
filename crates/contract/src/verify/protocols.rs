//! The checks of contract 1.5's protocols (CONTRACT.md, "tls, h2, h2c,
//! grpc"): each runs a short load of the engine itself against the
//! listener (its requests checked one by one as under load, so a check here
//! and a cell measure the same thing), and reads what the TLS handshake
//! agreed. TLS trusts the run's authority alone; HTTP/2 sends a multiplexed
//! burst of work documents; gRPC random calls, and an invalid one that must
//! fail as INVALID_ARGUMENT.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use netbench_engine::{
    run, BodyExpect, ErrorKind, Expect, IoBackend, LoadPlan, LoadResult, Pacing, RequestTemplate,
    RunControl, StatusExpect, Stop, TlsOptions, TlsPlan, Url,
};

use super::{fail, pass, Check, Ctx};
use crate::generator::WorkGenerator;
use crate::grpc::{compute_call, grpc_requests, INVALID_ARGUMENT};

/// Where the listeners of contract 1.5 are, and what to trust.
#[derive(Debug, Clone, Default)]
pub struct ProtocolTargets {
    /// The TLS listener (`tls`); `h2` checks HTTP/2 on it too.
    pub tls: Option<SocketAddr>,
    pub h2: bool,
    /// The HTTP/2 cleartext listener (`h2c`).
    pub h2c: Option<SocketAddr>,
    /// The gRPC listener (`grpc`).
    pub grpc: Option<SocketAddr>,
    /// The authority that signed the server's certificate (PEM).
    pub ca: Option<PathBuf>,
}

/// Streams of the multiplexed bursts, and work documents each sends.
const STREAMS: usize = 20;
const DOCUMENTS: usize = 40;

pub(super) fn checks(ctx: &mut Ctx<'_>, t: &ProtocolTargets) -> Vec<Check> {
    let mut out = Vec::new();
    if let Some(addr) = t.tls {
        out.push(tls(ctx, addr, t));
        if t.h2 {
            out.push(h2(ctx, addr, t));
        }
    }
    if let Some(addr) = t.h2c {
        out.push(h2c(ctx, addr));
    }
    if let Some(addr) = t.grpc {
        out.extend(grpc(ctx, addr));
    }
    out
}

/// A short closed-loop run of `requests` on `connections`, `streams` each
/// (HTTP/2), checked answer by answer.
fn load(
    addr: SocketAddr,
    requests: Vec<RequestTemplate>,
    tls: Option<TlsPlan>,
    h2: bool,
    streams: usize,
    timeout: Duration,
) -> Result<LoadResult, String> {
    let count = requests.len() as u64;
    let plan = LoadPlan {
        addr,
        connections: 1,
        workers: 1,
        stop: Stop::Count(count),
        pacing: Pacing::Closed,
        warmup: Duration::ZERO,
        timeout,
        keepalive: true,
        pipeline: streams,
        requests_per_connection: None,
        // A connection that fails is made again, so every request is an
        // attempt that ends (answered, or failed by kind) and the run ends.
        reconnect: true,
        requests,
        ws: None,
        sources: Vec::new(),
        io: IoBackend::Epoll,
        tls,
        session: None,
        h2,
    };
    run(&plan, &RunControl::new(&plan)).map_err(|e| e.to_string())
}

/// The errors of a run, as a reason: "12 body, 3 timeout".
fn errors(r: &LoadResult) -> Option<String> {
    let parts: Vec<String> = r
        .errors
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{n} {}", k.name()))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// What each kind that occurred in `r` means, of those `known` explains:
/// " (body: ...; grpc_status: ...)", or nothing when none of them did. A
/// reason names only kinds that happened (issue 42: "body" and
/// "grpc_status" were explained when all 40 calls had timed out).
fn hints(r: &LoadResult, known: &[(ErrorKind, &str)]) -> String {
    let said: Vec<String> = known
        .iter()
        .filter(|(k, _)| r.errors.get(*k) > 0)
        .map(|(k, why)| format!("{}: {why}", k.name()))
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        format!(" ({})", said.join("; "))
    }
}

/// What the HTTP/2 kinds that need a word mean.
const H2_HINTS: [(ErrorKind, &str); 1] = [(
    ErrorKind::H2Flood,
    "the server sent PING or SETTINGS frames faster than it read the answers",
)];

fn tls_plan(t: &ProtocolTargets, alpn: &[u8]) -> Result<TlsPlan, String> {
    TlsPlan::new(
        &TlsOptions {
            cacert: t.ca.clone(),
            alpn: vec![alpn.to_vec()],
            ..TlsOptions::default()
        },
        "127.0.0.1",
    )
    .map_err(|e| e.to_string())
}

/// Work documents as requests to `scheme://addr`.
fn work(ctx: &mut Ctx<'_>, addr: SocketAddr, scheme: &str) -> Vec<RequestTemplate> {
    let url = url(addr, scheme, "/work");
    let cases = WorkGenerator::new(ctx.opts.seed ^ 0x1_5, 5).cases(DOCUMENTS);
    crate::requests::work_requests(&url, true, cases)
}

fn url(addr: SocketAddr, scheme: &str, path: &str) -> Url {
    netbench_engine::parse_url(&format!("{scheme}://{addr}{path}")).expect("a valid URL")
}

fn tls(ctx: &mut Ctx<'_>, addr: SocketAddr, t: &ProtocolTargets) -> Check {
    let plan = match tls_plan(t, b"http/1.1") {
        Ok(p) => p,
        Err(e) => return fail("tls", e),
    };
    let requests = work(ctx, addr, "https");
    let r = match load(addr, requests, Some(plan), false, 1, ctx.client().timeout) {
        Ok(r) => r,
        Err(e) => return fail("tls", e),
    };
    if let Some(e) = errors(&r) {
        return fail(
            "tls",
            format!("{DOCUMENTS} work documents over TLS on {addr}: {e} (tls_* kinds: the handshake; see netbench load --help)"),
        );
    }
    let Some(tls) = r.tls else {
        return fail("tls", "no TLS handshake was recorded");
    };
    pass(
        "tls",
        format!(
            "{DOCUMENTS} work documents answered right over {} ({}), the certificate signed by the run's authority for 127.0.0.1",
            tls.version, tls.cipher
        ),
    )
}

fn h2(ctx: &mut Ctx<'_>, addr: SocketAddr, t: &ProtocolTargets) -> Check {
    let plan = match tls_plan(t, b"h2") {
        Ok(p) => p,
        Err(e) => return fail("h2", e),
    };
    let requests = work(ctx, addr, "https");
    let r = match load(
        addr,
        requests,
        Some(plan),
        true,
        STREAMS,
        ctx.client().timeout,
    ) {
        Ok(r) => r,
        Err(e) => return fail("h2", e),
    };
    if let Some(e) = errors(&r) {
        return fail(
            "h2",
            format!(
                "{DOCUMENTS} work documents over HTTP/2 (ALPN h2) on {addr}, {STREAMS} streams at once: {e}{}",
                hints(&r, &H2_HINTS)
            ),
        );
    }
    match r.tls.as_ref().and_then(|t| t.alpn.as_deref()) {
        Some("h2") => pass(
            "h2",
            format!("ALPN agreed h2; {DOCUMENTS} work documents on {STREAMS} streams at once of one connection, every answer right"),
        ),
        other => fail(
            "h2",
            format!("ALPN agreed {other:?}, want h2: offer h2 on the TLS listener"),
        ),
    }
}

fn h2c(ctx: &mut Ctx<'_>, addr: SocketAddr) -> Check {
    let requests = work(ctx, addr, "http");
    match load(addr, requests, None, true, STREAMS, ctx.client().timeout) {
        Err(e) => fail("h2c", e),
        Ok(r) => match errors(&r) {
            Some(e) => fail(
                "h2c",
                format!(
                    "{DOCUMENTS} work documents over HTTP/2 with prior knowledge on {addr}, {STREAMS} streams at once: {e}{}",
                    hints(&r, &H2_HINTS)
                ),
            ),
            None => pass(
                "h2c",
                format!("{DOCUMENTS} work documents on {STREAMS} streams at once of one prior-knowledge connection, every answer right"),
            ),
        },
    }
}

fn grpc(ctx: &mut Ctx<'_>, addr: SocketAddr) -> Vec<Check> {
    let url = url(addr, "http", "/");
    let cases = WorkGenerator::new(ctx.opts.seed ^ 0x9_c, 5).cases(DOCUMENTS);
    let timeout = ctx.client().timeout;
    let calls = match load(addr, grpc_requests(&url, &cases), None, true, STREAMS, timeout) {
        Err(e) => fail("grpc-compute", e),
        Ok(r) => match errors(&r) {
            Some(e) => fail(
                "grpc-compute",
                format!(
                    "{DOCUMENTS} random Compute calls on {addr}: {e}{}",
                    hints(
                        &r,
                        &[
                            (ErrorKind::Body, "a reply that is not the call's own"),
                            (ErrorKind::GrpcStatus, "not OK"),
                            H2_HINTS[0],
                        ]
                    )
                ),
            ),
            None => pass(
                "grpc-compute",
                format!("{DOCUMENTS} random Compute calls on {STREAMS} streams, each reply the call's own, grpc-status 0"),
            ),
        },
    };
    // A call whose only date is no date.
    let (mut request, _) = crate::grpc::grpc_case(&cases[0]).expect("a generated case");
    if let Some(g) = request.group.as_mut() {
        g.dates = vec!["2020-13-45T99:00:00.000Z".to_string()];
    }
    let bad = vec![compute_call(
        &url,
        &request,
        Expect {
            status: StatusExpect::Exact(200),
            content_type: None,
            body: BodyExpect::GrpcError {
                status: INVALID_ARGUMENT,
            },
            coding: Default::default(),
        },
    )];
    let refused = match load(addr, bad, None, true, 1, timeout) {
        Err(e) => fail("grpc-invalid", e),
        Ok(r) if r.errors.total() == 0 => pass(
            "grpc-invalid",
            "a call with an invalid date got grpc-status 3 (INVALID_ARGUMENT)",
        ),
        Ok(r) if r.errors.get(ErrorKind::GrpcStatus) > 0 => fail(
            "grpc-invalid",
            "a call with the date 2020-13-45T99:00:00.000Z did not get grpc-status 3 (INVALID_ARGUMENT)",
        ),
        Ok(r) => fail(
            "grpc-invalid",
            format!("a call with an invalid date: {}", errors(&r).unwrap_or_default()),
        ),
    };
    vec![calls, refused]
}
