//! No allocation per request: a run of four times as many requests makes
//! (almost) no more allocations than a short one, on the backend the tests
//! run on (NETBENCH_TEST_IO). Counted by this test binary's own allocator.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A keep-alive server answering `OK` that allocates nothing per request:
/// a thread and a stack buffer per connection, a static answer.
fn quiet_server() -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let answer =
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nOK";
                let mut buf = [0u8; 8192];
                let mut have = 0;
                loop {
                    let n = match stream.read(&mut buf[have..]) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    have += n;
                    let mut start = 0;
                    while let Some(end) = buf[start..have].windows(4).position(|w| w == b"\r\n\r\n")
                    {
                        start += end + 4;
                        if stream.write_all(answer).is_err() {
                            return;
                        }
                    }
                    buf.copy_within(start..have, 0);
                    have -= start;
                }
            });
        }
    });
    addr
}

#[test]
fn requests_do_not_allocate() {
    let addr = quiet_server();
    let count = |n: u64| {
        let plan = count_plan(addr, 8, 1, n);
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let r = run_plan(&plan);
        assert_eq!(r.requests, n);
        ALLOCATIONS.load(Ordering::Relaxed) - before
    };
    let _warm = count(2_000);
    let short = count(5_000);
    let long = count(20_000);
    // Set-up allocates (connections, histograms, threads), the same for
    // both runs; requests must not.
    let extra = long.saturating_sub(short);
    assert!(
        extra < 100,
        "15,000 more requests made {extra} more allocations ({short} for 5,000 requests, \
         {long} for 20,000): something allocates per request"
    );
}
