//! The engine over TLS (issue 30): answers checked as on cleartext, the
//! handshake timed apart, sessions resumed only when asked, WebSocket and
//! large answers through the same layer, and every way a server breaks TLS
//! counted as its own kind, never a hang. Runs on epoll, and on io_uring
//! under NETBENCH_TEST_IO=uring.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use netbench_engine::*;
use netbench_testkit::{serve, serve_contract, serve_tls, Behavior, Flaw, TlsFlaw};

fn tls_plan(ca: Option<&Path>, resume: bool, version: TlsVersion) -> TlsPlan {
    TlsPlan::new(
        &TlsOptions {
            cacert: ca.map(Path::to_path_buf),
            insecure: ca.is_none(),
            resume,
            version,
            alpn: vec![b"http/1.1".to_vec()],
            server_name: None,
        },
        "127.0.0.1",
    )
    .expect("a TLS plan")
}

#[test]
fn https_answers_are_checked_and_handshakes_timed_apart() {
    let server = serve_tls(serve(Behavior::Good), TlsFlaw::None);
    let mut plan = count_plan(server.addr, 4, 2, 400);
    plan.tls = Some(tls_plan(Some(&server.ca_file), false, TlsVersion::Any));
    let r = run_plan(&plan);
    assert_eq!(r.requests, 400, "{:?}", r.errors);
    assert_eq!(r.errors.total(), 0);
    let tls = r.tls.expect("a TLS summary");
    assert_eq!(tls.handshake.count, 4, "one handshake per connection");
    assert_eq!(tls.resumed, 0);
    assert_eq!(tls.version, "TLSv1_3");
    assert!(tls.cipher.starts_with("TLS13_"), "{}", tls.cipher);
    assert_eq!(tls.alpn.as_deref(), Some("http/1.1"));
    assert!(tls.handshake.min_ns > 0.0);
    // Ciphertext went over the wire: more than the plaintext's few bytes.
    assert!(r.bytes_read > 400 * 60, "{} bytes read", r.bytes_read);
}

#[test]
fn tls_1_2_is_offered_and_agreed_when_pinned() {
    let server = serve_tls(serve(Behavior::Good), TlsFlaw::None);
    let mut plan = count_plan(server.addr, 2, 1, 50);
    plan.tls = Some(tls_plan(Some(&server.ca_file), false, TlsVersion::V12));
    let r = run_plan(&plan);
    assert_eq!(r.requests, 50, "{:?}", r.errors);
    assert_eq!(r.tls.unwrap().version, "TLSv1_2");
}

#[test]
fn sessions_resume_only_when_asked() {
    let server = serve_tls(serve(Behavior::Good), TlsFlaw::None);
    for resume in [false, true] {
        let mut plan = count_plan(server.addr, 2, 1, 60);
        plan.requests_per_connection = Some(1);
        plan.tls = Some(tls_plan(Some(&server.ca_file), resume, TlsVersion::Any));
        let r = run_plan(&plan);
        assert_eq!(r.requests, 60, "{:?}", r.errors);
        let tls = r.tls.unwrap();
        assert!(
            tls.handshake.count >= 60,
            "{} handshakes",
            tls.handshake.count
        );
        if resume {
            // All but the first connection or two (before a ticket came).
            assert!(
                tls.resumed >= 50,
                "{} of {} resumed",
                tls.resumed,
                tls.handshake.count
            );
        } else {
            assert_eq!(tls.resumed, 0);
        }
    }
}

#[test]
fn large_answers_cross_many_records() {
    let server = serve_tls(serve(Behavior::ReverseBody), TlsFlaw::None);
    let body: Vec<u8> = (0..64 * 1024).map(|i| b'a' + (i % 26) as u8).collect();
    let mut expected = body.clone();
    expected.reverse();
    let url = parse_url("https://127.0.0.1/echo").unwrap();
    let mut plan = count_plan(server.addr, 2, 1, 40);
    plan.requests = vec![RequestTemplate {
        bytes: build_request(&RequestParts {
            method: "POST",
            url: &url,
            headers: &[],
            body: &body,
            keepalive: true,
        }),
        is_head: false,
        expect: Expect {
            body: BodyExpect::Exact(expected),
            ..Expect::default()
        },
    }];
    plan.tls = Some(tls_plan(Some(&server.ca_file), false, TlsVersion::Any));
    let r = run_plan(&plan);
    assert_eq!(r.requests, 40, "{:?}", r.errors);
    assert!(r.bytes_read > 40 * 64 * 1024);
}

#[test]
fn websocket_echoes_over_tls() {
    let server = serve_tls(serve_contract(Flaw::None), TlsFlaw::None);
    let mut plan = count_plan(server.addr, 3, 1, 300);
    plan.requests = Vec::new();
    plan.ws = Some(WsPlan {
        path: "/ws".into(),
        host: server.addr.to_string(),
        message_size: 3000,
        binary: true,
    });
    plan.tls = Some(tls_plan(Some(&server.ca_file), false, TlsVersion::Any));
    let r = run_plan(&plan);
    assert_eq!(r.requests, 300, "{:?}", r.errors);
    assert_eq!(r.tls.unwrap().handshake.count, 3);
}

/// Every attempt against a server with `flaw` fails as `kind`, once per
/// connection attempt, and the run ends by its count well within the
/// timeout.
fn each_attempt_fails_as(flaw: TlsFlaw, kind: ErrorKind, version: TlsVersion, other_ca: bool) {
    let server = serve_tls(serve(Behavior::Good), flaw);
    let ca = if other_ca {
        // A CA that signed nothing of this server's.
        serve_tls(serve(Behavior::Good), TlsFlaw::None).ca_file
    } else {
        server.ca_file.clone()
    };
    let mut plan = count_plan(server.addr, 2, 1, 6);
    plan.timeout = Duration::from_secs(3);
    plan.tls = Some(tls_plan(Some(&ca), false, version));
    let started = Instant::now();
    let r = run_plan(&plan);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{flaw:?} took {:?}",
        started.elapsed()
    );
    assert_eq!(r.requests, 0, "{flaw:?}");
    assert!(r.errors.get(kind) >= 6, "{flaw:?}: {:?}", r.errors);
    assert!(only_errors_of(&r, kind), "{flaw:?}: {:?}", r.errors);
    let tls = r.tls.unwrap();
    assert_eq!(tls.handshake.count, 0);
    assert!(tls.version.is_empty(), "no handshake finished");
}

#[test]
fn an_untrusted_certificate_is_its_own_kind() {
    each_attempt_fails_as(
        TlsFlaw::None,
        ErrorKind::TlsUntrusted,
        TlsVersion::Any,
        true,
    );
}

#[test]
fn a_certificate_for_another_name_is_its_own_kind() {
    each_attempt_fails_as(
        TlsFlaw::WrongName,
        ErrorKind::TlsName,
        TlsVersion::Any,
        false,
    );
}

#[test]
fn an_expired_certificate_is_its_own_kind() {
    each_attempt_fails_as(
        TlsFlaw::Expired,
        ErrorKind::TlsExpired,
        TlsVersion::Any,
        false,
    );
}

#[test]
fn no_common_alpn_or_version_is_an_alert() {
    each_attempt_fails_as(
        TlsFlaw::AlpnH2Only,
        ErrorKind::TlsAlert,
        TlsVersion::Any,
        false,
    );
    each_attempt_fails_as(
        TlsFlaw::Tls12Only,
        ErrorKind::TlsAlert,
        TlsVersion::V13,
        false,
    );
}

#[test]
fn garbage_or_a_close_mid_handshake_is_a_protocol_error() {
    each_attempt_fails_as(
        TlsFlaw::NotTls,
        ErrorKind::TlsProtocol,
        TlsVersion::Any,
        false,
    );
    each_attempt_fails_as(
        TlsFlaw::CloseMidHandshake,
        ErrorKind::TlsProtocol,
        TlsVersion::Any,
        false,
    );
}

#[test]
fn a_server_silent_in_the_handshake_times_out() {
    let server = serve_tls(serve(Behavior::Good), TlsFlaw::Silent);
    let mut plan = count_plan(server.addr, 1, 1, 2);
    plan.timeout = Duration::from_millis(300);
    plan.tls = Some(tls_plan(None, false, TlsVersion::Any));
    let started = Instant::now();
    let r = run_plan(&plan);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(r.errors.get(ErrorKind::Timeout), 2, "{:?}", r.errors);
}
