//! `netbench load`'s stage two of argument handling: the arguments resolved
//! and checked into a plan (`launch` runs it).

use std::time::Duration;

use anyhow::{bail, Context, Result};
use netbench_contract::WorkGenerator;
use netbench_engine::{
    build_request, default_workers, parse_url, BodyExpect, Coding, Expect, IoBackend, LoadPlan,
    Pacing, PlanError, RequestParts, RequestTemplate, StatusExpect, Stop, TlsOptions, TlsPlan,
    TlsVersion, Url, WsPlan,
};
use netbench_report::WorkSource;

use crate::cli::{IoArg, LoadArgs, TlsVersionArg};
use crate::pool::{read_pool, PoolEntry};
use crate::seed::fresh_seed;
use crate::slo::{slos, LatencySlo};

const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// A validated plan plus what the report shows of the user's input.
pub(crate) struct Resolved {
    pub plan: LoadPlan,
    pub url: String,
    pub method: String,
    pub work: Option<WorkSource>,
    /// The latency objectives judged after the run (`--slo-*`).
    pub slos: Vec<LatencySlo>,
}

fn parse_status(s: &str) -> Result<StatusExpect> {
    if s.eq_ignore_ascii_case("2xx") {
        return Ok(StatusExpect::Success);
    }
    match s.parse::<u16>() {
        Ok(code @ 100..=599) => Ok(StatusExpect::Exact(code)),
        _ => bail!("--expect-status `{s}` is not a status code (100-599) or 2xx"),
    }
}

fn parse_header(h: &str) -> Result<(String, String)> {
    let Some((name, value)) = h.split_once(':') else {
        bail!("header `{h}` has no colon; write it as 'Name: value'");
    };
    let name = name.trim();
    let valid_name = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b));
    if !valid_name {
        bail!("header name `{name}` is not a valid HTTP token");
    }
    if value.contains(['\r', '\n']) {
        bail!("header `{name}` has a line break in its value");
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// Stage two: everything the engine needs, checked and resolved, or an error
/// The most dates one `--work` set may hold in all: about 60 MB of request
/// bodies and expected answers, generated before the run starts.
const MAX_WORK_DATES: u64 = 2_000_000;

/// that says what to change.
pub(crate) fn resolve(args: &LoadArgs) -> Result<Resolved> {
    let url = target_url(args)?;
    let addr = url.resolve()?;

    let connections = args.connections as usize;
    let workers = args
        .threads
        .map_or_else(default_workers, |t| t as usize)
        .min(connections);
    let stop = match (args.requests, args.duration) {
        (Some(n), _) => Stop::Count(n),
        (None, Some(d)) => Stop::After(d),
        (None, None) => Stop::After(DEFAULT_DURATION),
    };
    let pacing = match args.rate {
        None => Pacing::Closed,
        Some(per_second) => Pacing::Open { per_second },
    };
    let keepalive = !args.no_keepalive;
    let h2 = args.h2 || args.h2c || args.grpc;
    if args.streams > 1 && !h2 {
        bail!("--streams is for HTTP/2: add --h2 (https://) or --h2c (http://), or use --pipeline for HTTP/1.1");
    }
    let pipeline = if h2 {
        args.streams as usize
    } else {
        args.pipeline as usize
    };
    if let Some(n) = args.work {
        let dates = n.saturating_mul(args.work_dates);
        if dates > MAX_WORK_DATES {
            bail!(
                "--work {n} × --work-dates {} makes {dates} dates to generate and keep in memory; \
                 keep the product at most {MAX_WORK_DATES} (fewer documents or fewer dates each)",
                args.work_dates
            );
        }
    }
    if !(0.0..=1.0).contains(&args.max_error_rate) {
        bail!("--max-error-rate must be between 0 and 1 (0.01 means 1%)");
    }
    let slos = slos(args)?;

    let mut headers = args
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>>>()?;
    if args.compressed
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("accept-encoding"))
    {
        headers.push(("Accept-Encoding".to_string(), "gzip".to_string()));
    }
    if args.seed.is_some() && args.work.is_none() && !args.app && !args.grpc {
        bail!("--seed seeds --work's documents, --app's pages or --grpc's calls: give one of them");
    }
    let work = args.work.map(|n| WorkSource {
        documents: n as usize,
        dates: args.work_dates as usize,
        seed: args.seed.unwrap_or_else(fresh_seed),
    });
    let entries: Vec<PoolEntry> = match (&args.body, &args.body_file, &args.body_pool) {
        _ if work.is_some() => work_entries(work.as_ref().expect("checked")),
        (_, _, Some(path)) => read_pool(path)?,
        (Some(b), _, _) => vec![plain_entry(b.as_bytes().to_vec())],
        (_, Some(path), _) => {
            let body = std::fs::read(path)
                .with_context(|| format!("reading --body-file {}", path.display()))?;
            vec![plain_entry(body)]
        }
        (None, None, None) => vec![plain_entry(Vec::new())],
    };
    let has_body = args.body.is_some()
        || args.body_file.is_some()
        || args.body_pool.is_some()
        || work.is_some();
    let method = match &args.method {
        Some(m)
            if !m.is_empty()
                && m.bytes()
                    .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_') =>
        {
            m.to_ascii_uppercase()
        }
        Some(m) => bail!("`{m}` is not an HTTP method"),
        // A gRPC call is a POST (its body is built later, from --work).
        None if has_body || args.grpc => "POST".to_string(),
        None => "GET".to_string(),
    };

    let status = parse_status(&args.expect_status)?;
    let expect_json = match &args.expect_json {
        Some(j) => Some(
            serde_json::from_str::<serde_json::Value>(j)
                .context("--expect-json is not valid JSON")?,
        ),
        None => None,
    };
    let has_content_type = headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
    let mut requests = Vec::with_capacity(entries.len());
    for e in entries {
        let mut h = headers.clone();
        if e.is_json && !has_content_type {
            h.push(("Content-Type".to_string(), "application/json".to_string()));
        }
        let bytes = build_request(&RequestParts {
            method: &method,
            url: &url,
            headers: &h,
            body: &e.body,
            keepalive,
        });
        let body = match (
            e.expect_body,
            e.expect_json,
            &args.expect_body,
            &expect_json,
        ) {
            (Some(b), _, _, _) => BodyExpect::Exact(b),
            (_, Some(j), _, _) => BodyExpect::json(j),
            (_, _, Some(b), _) => BodyExpect::Exact(b.as_bytes().to_vec()),
            (_, _, _, Some(j)) => BodyExpect::json(j.clone()),
            _ => BodyExpect::Any,
        };
        requests.push(RequestTemplate {
            bytes,
            is_head: method == "HEAD",
            expect: Expect {
                status: e.expect_status.map_or(status, StatusExpect::Exact),
                content_type: e
                    .expect_content_type
                    .or_else(|| args.expect_content_type.clone()),
                body,
                coding: if args.compressed {
                    Coding::Gzip
                } else {
                    Coding::Any
                },
            },
        });
    }

    let ws = args.ws.then(|| WsPlan {
        path: url.path.clone(),
        host: url.host_header(),
        message_size: args.ws_message_size as usize,
        binary: args.ws_binary,
    });
    if ws.is_some() {
        // Every message is generated afresh; no request templates.
        requests.clear();
    }
    if args.grpc {
        let seed = args.seed.unwrap_or_else(fresh_seed);
        let cases = WorkGenerator::new(seed, args.work_dates as usize)
            .cases(args.work.unwrap_or(100) as usize);
        requests = netbench_contract::grpc::grpc_requests(&url, &cases);
    }
    let mut session = None;
    if args.app {
        let seed = args.seed.unwrap_or_else(fresh_seed);
        let (pages, sessions) =
            netbench_contract::app::app_load(&url, seed, netbench_contract::app::LOAD_PAGES);
        requests = pages;
        session = Some(sessions);
    }
    let plan = LoadPlan {
        addr,
        connections,
        workers,
        stop,
        pacing,
        warmup: args.warmup,
        timeout: args.timeout,
        keepalive,
        pipeline,
        requests_per_connection: args.requests_per_connection,
        reconnect: true,
        requests,
        ws,
        sources: args.source.clone().map(|s| s.0).unwrap_or_default(),
        io: match args.io {
            IoArg::Epoll => IoBackend::Epoll,
            IoArg::Uring => IoBackend::Uring,
            IoArg::Auto => IoBackend::CHEAPEST,
        },
        tls: tls_plan(args, &url)?,
        session,
        h2,
    };
    plan.validate()
        .map_err(|e| anyhow::anyhow!("{e}; {}", how_to_fix(&e)))?;
    Ok(Resolved {
        plan,
        url: args.url.clone(),
        method,
        work,
        slos,
    })
}

/// The target, with a WebSocket URL's scheme (ws://, wss://) read as the
/// http:// or https:// its upgrade request goes to.
fn target_url(args: &LoadArgs) -> Result<Url> {
    let lower = args.url.to_ascii_lowercase();
    for (ws, http) in [("ws://", "http://"), ("wss://", "https://")] {
        if let Some(rest) = lower.starts_with(ws).then(|| &args.url[ws.len()..]) {
            if !args.ws {
                bail!(
                    "`{}` is a WebSocket URL; add --ws to send WebSocket messages",
                    args.url
                );
            }
            return Ok(parse_url(&format!("{http}{rest}"))?);
        }
    }
    Ok(parse_url(&args.url)?)
}

/// The TLS half of the plan for an https:// or wss:// URL; the TLS options
/// are refused on a cleartext one, where they would do nothing.
fn tls_plan(args: &LoadArgs, url: &Url) -> Result<Option<TlsPlan>> {
    if args.h2 && !url.tls {
        bail!("--h2 is HTTP/2 over TLS: give an https:// URL, or use --h2c for cleartext");
    }
    if args.h2c && url.tls {
        bail!("--h2c is HTTP/2 over cleartext: give an http:// URL, or use --h2 for TLS");
    }
    if !url.tls {
        let given = [
            (args.cacert.is_some(), "--cacert"),
            (args.insecure, "--insecure"),
            (args.tls_resume, "--tls-resume"),
            (args.tls_version != TlsVersionArg::Any, "--tls-version"),
        ];
        if let Some((_, flag)) = given.iter().find(|(on, _)| *on) {
            bail!("{flag} is for TLS; use an https:// (or wss://) URL, or drop {flag}");
        }
        return Ok(None);
    }
    let options = TlsOptions {
        cacert: args.cacert.clone(),
        insecure: args.insecure,
        resume: args.tls_resume,
        version: match args.tls_version {
            TlsVersionArg::Any => TlsVersion::Any,
            TlsVersionArg::V12 => TlsVersion::V12,
            TlsVersionArg::V13 => TlsVersion::V13,
        },
        // One protocol offered: the one the run speaks (HTTP/1.1 for
        // requests and the WebSocket upgrade alike), so a server that cannot
        // speak it refuses at the handshake.
        alpn: vec![if args.h2 || args.grpc {
            b"h2".to_vec()
        } else {
            b"http/1.1".to_vec()
        }],
        server_name: None,
    };
    Ok(Some(TlsPlan::new(&options, &url.tls_name())?))
}

/// The engine's plan rules in the command line's words.
fn how_to_fix(e: &PlanError) -> &'static str {
    match e {
        PlanError::PipelineWithoutKeepalive => "drop --no-keepalive or --pipeline",
        PlanError::PipelineOpenLoop => "drop --rate or --pipeline",
        PlanError::Rate => "give --rate a number above 0 and at most 1e9",
        PlanError::Timeout => "give --timeout a duration above zero",
        PlanError::Duration => "give --duration a duration above zero",
        PlanError::RequestsPerConnection => "give --requests-per-connection 1 or more",
        PlanError::NoConnections | PlanError::Workers => "check -c and -t",
        PlanError::NoRequests | PlanError::TooManyRequests | PlanError::NoPipeline => {
            "check the request options"
        }
        PlanError::WsMessageSize => "give --ws-message-size at most 65536",
        PlanError::WsPipeline => "drop --pipeline with --ws",
        PlanError::WsKeepalive => "drop --no-keepalive with --ws",
        PlanError::SourceFamily => "give --source addresses of the target's family (IPv4 or IPv6)",
        PlanError::SessionPipeline | PlanError::SessionRequests | PlanError::SessionWs => {
            "--app sends its own pages one at a time on kept connections"
        }
        PlanError::H2Mode => "drop --ws, --app or --no-keepalive with --h2 or --h2c",
        PlanError::H2Request(_) => "give bodies by length, not chunked, with --h2 or --h2c",
    }
}

/// The contract's work test as a pool: distinct documents, each with the
/// answer it must get.
fn work_entries(w: &WorkSource) -> Vec<PoolEntry> {
    WorkGenerator::new(w.seed, w.dates)
        .cases(w.documents)
        .into_iter()
        .map(|case| PoolEntry {
            body: case.body,
            is_json: true,
            expect_status: Some(200),
            expect_content_type: Some("application/json".to_string()),
            expect_body: None,
            expect_json: Some(case.expected),
        })
        .collect()
}

fn plain_entry(body: Vec<u8>) -> PoolEntry {
    PoolEntry {
        body,
        is_json: false,
        expect_status: None,
        expect_content_type: None,
        expect_body: None,
        expect_json: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cli::load_args as args;
    use clap::Parser;

    #[test]
    fn defaults() {
        let r = resolve(&args("netbench load http://127.0.0.1:8080/")).unwrap();
        assert_eq!(r.plan.connections, 10);
        assert_eq!(r.plan.stop, Stop::After(DEFAULT_DURATION));
        assert_eq!(r.plan.pacing, Pacing::Closed);
        assert!(r.plan.keepalive);
        assert_eq!(r.method, "GET");
        assert_eq!(r.plan.requests.len(), 1);
        assert!(r.plan.workers >= 1 && r.plan.workers <= 10);
        assert_eq!(r.plan.requests[0].expect.status, StatusExpect::Success);
    }

    #[test]
    fn compressed_asks_for_gzip_and_requires_it() {
        let r = resolve(&args(
            "netbench load --compressed --work 3 http://127.0.0.1:1/w",
        ))
        .unwrap();
        for t in &r.plan.requests {
            assert_eq!(t.expect.coding, Coding::Gzip);
            assert!(String::from_utf8_lossy(&t.bytes).contains("Accept-Encoding: gzip\r\n"));
        }
        // A header given with -H is the one sent, not a second one.
        let r = resolve(&args(
            "netbench load --compressed -H Accept-Encoding:gzip,br http://127.0.0.1:1/",
        ))
        .unwrap();
        let text = String::from_utf8_lossy(&r.plan.requests[0].bytes).to_string();
        assert_eq!(text.matches("Accept-Encoding").count(), 1, "{text}");
        let r = resolve(&args("netbench load http://127.0.0.1:1/")).unwrap();
        assert_eq!(r.plan.requests[0].expect.coding, Coding::Any);
    }

    #[test]
    fn workers_never_exceed_connections() {
        let r = resolve(&args("netbench load -c 1 -t 4 http://127.0.0.1:1/")).unwrap();
        assert_eq!(r.plan.workers, 1);
    }

    #[test]
    fn body_means_post_and_expectations_apply() {
        let r = resolve(&args(
            "netbench load --body {} --expect-json {\"a\":1} --expect-status 201 -H X-A:1 http://127.0.0.1:1/w",
        ))
        .unwrap();
        assert_eq!(r.method, "POST");
        let t = &r.plan.requests[0];
        assert!(String::from_utf8_lossy(&t.bytes).contains("X-A: 1\r\n"));
        assert_eq!(t.expect.status, StatusExpect::Exact(201));
        assert!(matches!(t.expect.body, BodyExpect::Json { .. }));
    }

    #[test]
    fn work_pool_posts_distinct_checked_documents() {
        let r = resolve(&args(
            "netbench load --work 25 --work-dates 3 --seed 7 http://127.0.0.1:1/work",
        ))
        .unwrap();
        assert_eq!(r.method, "POST");
        assert_eq!(r.plan.requests.len(), 25);
        let w = r.work.unwrap();
        assert_eq!((w.documents, w.dates, w.seed), (25, 3, 7));
        for t in &r.plan.requests {
            let text = String::from_utf8_lossy(&t.bytes);
            assert!(text.contains("Content-Type: application/json\r\n"));
            assert_eq!(t.expect.status, StatusExpect::Exact(200));
            assert_eq!(t.expect.content_type.as_deref(), Some("application/json"));
            assert!(matches!(t.expect.body, BodyExpect::Json { .. }));
        }
        assert_ne!(r.plan.requests[0].bytes, r.plan.requests[1].bytes);
        let again = resolve(&args(
            "netbench load --work 25 --work-dates 3 --seed 7 http://127.0.0.1:1/work",
        ))
        .unwrap();
        assert_eq!(again.plan.requests[24].bytes, r.plan.requests[24].bytes);
    }

    #[test]
    fn refusals_say_what_to_change() {
        let err = |line: &str| format!("{:#}", resolve(&args(line)).err().expect(line));
        assert!(err("netbench load --cacert ca.pem http://127.0.0.1:1/").contains("is for TLS"));
        assert!(err("netbench load --tls-resume http://127.0.0.1:1/")
            .contains("--tls-resume is for TLS"));
        assert!(
            err("netbench load --cacert /nonexistent/ca.pem https://127.0.0.1:1/")
                .contains("could not read --cacert")
        );
        assert!(
            err("netbench load --no-keepalive --pipeline 4 http://127.0.0.1:1/")
                .contains("keep-alive")
        );
        assert!(err("netbench load -R 10 --pipeline 4 http://127.0.0.1:1/").contains("closed loop"));
        assert!(err("netbench load -R 0 http://127.0.0.1:1/").contains("positive"));
        assert!(err("netbench load -H nocolon http://127.0.0.1:1/").contains("no colon"));
        assert!(err("netbench load --expect-status 2 http://127.0.0.1:1/").contains("status code"));
        assert!(
            err("netbench load --expect-json {bad http://127.0.0.1:1/").contains("not valid JSON")
        );
        assert!(
            err("netbench load --max-error-rate 5 http://127.0.0.1:1/").contains("between 0 and 1")
        );
        assert!(err("netbench load -d 0s http://127.0.0.1:1/").contains("above zero"));
    }

    #[test]
    fn ws_plans_messages_at_the_upgrade_path() {
        for url in ["ws://127.0.0.1:9/ws?room=1", "http://127.0.0.1:9/ws?room=1"] {
            let r = resolve(&args(&format!("netbench load --ws -n 5 {url}"))).unwrap();
            let ws = r.plan.ws.as_ref().expect("a WebSocket plan");
            assert_eq!(ws.path, "/ws?room=1");
            assert_eq!(ws.host, "127.0.0.1:9");
            assert_eq!(ws.message_size, 64, "the documented default");
            assert!(!ws.binary);
            assert!(r.plan.requests.is_empty());
            assert_eq!(r.plan.addr.to_string(), "127.0.0.1:9");
        }
        let r = resolve(&args(
            "netbench load --ws --ws-binary --ws-message-size 65536 -R 100 http://127.0.0.1:9/ws",
        ))
        .unwrap();
        let ws = r.plan.ws.clone().unwrap();
        assert!(ws.binary);
        assert_eq!(ws.message_size, 65536);
        assert!(r.plan.validate().is_ok());
    }

    #[test]
    fn https_and_wss_plan_tls_with_http_1_1_offered() {
        let r = resolve(&args("netbench load -k --tls-resume https://127.0.0.1:9/x")).unwrap();
        let tls = r.plan.tls.as_ref().expect("a TLS plan");
        assert!(tls.insecure && tls.resume);
        assert_eq!(r.plan.addr.to_string(), "127.0.0.1:9");
        let r = resolve(&args(
            "netbench load --ws -k --tls-version 1.3 wss://127.0.0.1:9/ws",
        ))
        .unwrap();
        assert!(r.plan.ws.is_some());
        assert_eq!(r.plan.tls.as_ref().unwrap().version, TlsVersion::V13);
        let r = resolve(&args("netbench load -k https://127.0.0.1/")).unwrap();
        assert_eq!(r.plan.addr.port(), 443);
        assert!(resolve(&args("netbench load http://127.0.0.1:9/"))
            .unwrap()
            .plan
            .tls
            .is_none());
    }

    #[test]
    fn ws_refusals_say_what_to_change() {
        let err = |line: &str| format!("{:#}", resolve(&args(line)).err().expect(line));
        assert!(err("netbench load ws://127.0.0.1:1/ws").contains("add --ws"));
        assert!(err("netbench load wss://127.0.0.1:1/ws").contains("add --ws"));
        let refused = |line: &str| {
            crate::cli::Cli::try_parse_from(line.split_whitespace())
                .err()
                .unwrap_or_else(|| panic!("clap took `{line}`"))
                .to_string()
        };
        for option in [
            "--body x",
            "--work 5",
            "--pipeline 2",
            "--no-keepalive",
            "-m POST",
            "-H X-A:1",
            "--expect-body OK",
        ] {
            let e = refused(&format!("netbench load --ws {option} ws://h/ws"));
            assert!(e.contains("cannot be used with"), "{option}: {e}");
        }
        assert!(refused("netbench load --ws-binary http://h/").contains("--ws"));
        assert!(refused("netbench load --ws --ws-message-size 65537 ws://h/ws").contains("65537"));
    }

    #[test]
    fn clap_refuses_conflicts() {
        assert!(crate::cli::Cli::try_parse_from([
            "netbench",
            "load",
            "-d",
            "1s",
            "-n",
            "5",
            "http://h/"
        ])
        .is_err());
        assert!(
            crate::cli::Cli::try_parse_from(["netbench", "load", "-c", "0", "http://h/"]).is_err()
        );
        assert!(crate::cli::Cli::try_parse_from([
            "netbench",
            "load",
            "--body",
            "x",
            "--body-file",
            "f",
            "http://h/"
        ])
        .is_err());
    }
}
