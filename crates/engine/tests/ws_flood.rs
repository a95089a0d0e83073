//! Issue 27, item 2: a WebSocket server that floods pings and never reads.
//! The pongs it never takes must not pile up in the client: at most one
//! waits (RFC 6455 §5.5.3 lets an endpoint answer only the most recent
//! ping), so the client's memory stays flat however long the flood lasts.
//! In a test binary of its own, so no other test's memory is counted.

mod common;

use std::time::Duration;

use common::{run_plan, test_io};
use netbench_engine::*;
use netbench_testkit::{serve, Behavior};

#[test]
fn a_ping_flood_that_is_never_read_leaves_the_client_s_memory_flat() {
    let server = serve(Behavior::WsPingFlood);
    let plan = LoadPlan {
        sources: Vec::new(),
        io: test_io(),
        addr: server.addr,
        connections: 1,
        workers: 1,
        stop: Stop::After(Duration::from_secs(4)),
        pacing: Pacing::Closed,
        warmup: Duration::ZERO,
        timeout: Duration::from_secs(5),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        requests: Vec::new(),
        ws: Some(WsPlan {
            path: "/ws".into(),
            host: server.addr.to_string(),
            message_size: 64,
            binary: false,
        }),
        tls: None,
        session: None,
        h2: false,
    };
    let run = std::thread::spawn(move || run_plan(&plan));
    // Memory after the flood has run a second (set-up, buffers at their
    // size) and two seconds later: before the fix it grew ~80 MB a second.
    std::thread::sleep(Duration::from_secs(1));
    let early = rss_bytes();
    std::thread::sleep(Duration::from_secs(2));
    let late = rss_bytes();
    let r = run.join().unwrap();
    // The pings were read, and answered as far as the server took them.
    assert!(
        r.bytes_read > 1 << 20,
        "the flood was not read: {}",
        r.bytes_read
    );
    assert!(
        late.saturating_sub(early) < 16 << 20,
        "the client grew from {early} to {late} bytes under the flood"
    );
}

/// The process's resident memory now, from /proc/self/statm.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    pages * page
}
