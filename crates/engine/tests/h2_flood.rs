//! Issue 42, items 1 and 2: HTTP/2 servers that flood the client with
//! control frames and never read. Every PING and SETTINGS is owed an
//! answer, and the client used to queue them all (2.49 GB in 5 s on one
//! h2c connection, 1.24 GB in 3 s over TLS). Now the answers owed at once
//! are bounded and a flood ends its connection with GOAWAY
//! (ENHANCE_YOUR_CALM), counted as `h2_flood`; floods that are owed nothing
//! (WINDOW_UPDATE, RST_STREAM of closed streams) are read and cost nothing.
//! The client's peak memory over each flood must stay within 64 MB of
//! where it started: a bound a correct client cannot miss (its buffers are
//! a few hundred KB) and a flood that queues its answers passes within a
//! second. In a test binary of its own, and one flood after another, so no
//! other test's memory is counted. Runs on epoll, and on io_uring under
//! NETBENCH_TEST_IO=uring.

mod common;

use std::time::Duration;

use common::*;
use netbench_engine::*;
use netbench_testkit::{serve_broken_h2, serve_tls, H2Flaw, TlsFlaw};

const BOUND: u64 = 64 << 20;

fn flood_plan(addr: std::net::SocketAddr) -> LoadPlan {
    let url = parse_url(&format!("http://{addr}/blank")).unwrap();
    LoadPlan {
        h2: true,
        pipeline: 4,
        stop: Stop::After(Duration::from_secs(3)),
        requests: vec![RequestTemplate {
            bytes: build_request(&RequestParts {
                method: "GET",
                url: &url,
                headers: &[],
                body: b"",
                keepalive: true,
            }),
            ..ok_request(true)
        }],
        ..count_plan(addr, 2, 1, 1)
    }
}

/// Runs `plan` while sampling this process's resident memory every 50 ms;
/// returns the result and the peak growth over the memory before it.
fn run_sampled(plan: LoadPlan) -> (LoadResult, u64) {
    let before = rss_bytes();
    let run = std::thread::spawn(move || run_plan(&plan));
    let mut peak = before;
    while !run.is_finished() {
        peak = peak.max(rss_bytes());
        std::thread::sleep(Duration::from_millis(50));
    }
    let r = run.join().unwrap();
    (r, peak.max(rss_bytes()).saturating_sub(before))
}

#[test]
fn control_frame_floods_never_read_leave_the_client_s_memory_flat() {
    let cases = [
        (H2Flaw::PingFlood, false, true),
        (H2Flaw::SettingsFlood, false, true),
        (H2Flaw::WindowUpdateFlood, false, false),
        (H2Flaw::RstFlood, false, false),
        (H2Flaw::PingFlood, true, true),
        (H2Flaw::SettingsFlood, true, true),
    ];
    for (flaw, over_tls, owed) in cases {
        let mut plan = if over_tls {
            let server = serve_tls(serve_broken_h2(flaw), TlsFlaw::AlpnH2Only);
            let mut plan = flood_plan(server.addr);
            plan.tls = Some(
                TlsPlan::new(
                    &TlsOptions {
                        cacert: Some(server.ca_file.clone()),
                        alpn: vec![b"h2".to_vec()],
                        ..TlsOptions::default()
                    },
                    "127.0.0.1",
                )
                .unwrap(),
            );
            plan
        } else {
            flood_plan(serve_broken_h2(flaw).addr)
        };
        // A flood owed answers runs uninterrupted by timeouts (as
        // `--timeout 10s` did in the issue); otherwise the streams nobody
        // answers fail within the run.
        plan.timeout = Duration::from_secs(if owed { 10 } else { 1 });
        let (r, growth) = run_sampled(plan);
        let what = format!("{flaw:?} (TLS: {over_tls}): {:?}", r.errors);
        assert!(r.bytes_read > 1 << 20, "{what}: the flood was not read");
        assert!(
            growth < BOUND,
            "{what}: the client grew {} MB under the flood",
            growth >> 20
        );
        assert_eq!(r.requests, 0, "{what}");
        if owed {
            // The flood is its own kind, and the only one.
            assert!(r.errors.get(ErrorKind::H2Flood) > 0, "{what}");
            assert!(only_errors_of(&r, ErrorKind::H2Flood), "{what}");
        } else {
            // Owed nothing: the streams nobody answers time out.
            assert_eq!(r.errors.get(ErrorKind::H2Flood), 0, "{what}");
            assert!(r.errors.get(ErrorKind::Timeout) > 0, "{what}");
        }
    }
}

/// The process's resident memory now, from /proc/self/statm.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    pages * page
}
