//! Plans for the engine's integration tests.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use netbench_engine::*;

/// The backend the engine tests run on: epoll, or io_uring when
/// NETBENCH_TEST_IO=uring (`make test` runs them both ways).
pub fn test_io() -> IoBackend {
    match std::env::var("NETBENCH_TEST_IO").as_deref() {
        Ok("uring") => {
            if let Some(why) = uring_refusal() {
                panic!("NETBENCH_TEST_IO=uring but io_uring is refused here: {why}");
            }
            IoBackend::Uring
        }
        _ => IoBackend::Epoll,
    }
}

/// A GET expecting 200 text/plain `OK`.
pub fn ok_request(keepalive: bool) -> RequestTemplate {
    let url = parse_url("http://127.0.0.1/").unwrap();
    RequestTemplate {
        bytes: build_request(&RequestParts {
            method: "GET",
            url: &url,
            headers: &[],
            body: b"",
            keepalive,
        }),
        is_head: false,
        expect: Expect {
            status: StatusExpect::Success,
            content_type: Some("text/plain".into()),
            body: BodyExpect::Exact(b"OK".to_vec()),
            coding: Default::default(),
        },
    }
}

/// A closed-loop plan for an exact count.
pub fn count_plan(addr: SocketAddr, connections: usize, workers: usize, n: u64) -> LoadPlan {
    LoadPlan {
        sources: Vec::new(),
        io: test_io(),
        addr,
        connections,
        workers,
        stop: Stop::Count(n),
        pacing: Pacing::Closed,
        warmup: Duration::ZERO,
        timeout: Duration::from_secs(5),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        requests: vec![ok_request(true)],
        ws: None,
        tls: None,
        session: None,
        h2: false,
    }
}

pub fn run_plan(plan: &LoadPlan) -> LoadResult {
    netbench_engine::run(plan, &RunControl::new(plan)).expect("run starts")
}

/// Every error kind other than `kind` is zero.
pub fn only_errors_of(r: &LoadResult, kind: ErrorKind) -> bool {
    r.errors.iter().all(|(k, n)| k == kind || n == 0)
}
