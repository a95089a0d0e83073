//! The 1.2 parts under load (issue 31): the engine checks every static file
//! and every upload digest it is answered, and counts a flawed server's
//! answers as body errors, one per answer. Counts only, never speed.

use std::time::Duration;

use netbench_contract::{static_request, upload_requests, STATIC_FILES, UPLOAD_SIZES};
use netbench_engine::{
    parse_url, run, ErrorKind, LoadPlan, LoadResult, Pacing, RequestTemplate, RunControl, Stop,
};
use netbench_testkit::{serve_contract, Flaw, TestServer};

fn load(server: &TestServer, requests: Vec<RequestTemplate>, count: u64) -> LoadResult {
    let plan = LoadPlan {
        sources: Vec::new(),
        io: Default::default(),
        addr: server.addr,
        connections: 3,
        workers: 1,
        stop: Stop::Count(count),
        pacing: Pacing::Closed,
        warmup: Duration::ZERO,
        timeout: Duration::from_secs(10),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        requests,
        ws: None,
        tls: None,
    };
    run(&plan, &RunControl::new(&plan)).unwrap()
}

#[test]
fn static_files_are_checked_byte_for_byte_under_load() {
    for file in STATIC_FILES {
        let good = serve_contract(Flaw::None);
        let url = parse_url(&good.url("/")).unwrap();
        let requests = || vec![static_request(&url, true, file)];
        let r = load(&good, requests(), 30);
        assert_eq!((r.requests, r.errors.total()), (30, 0), "{:?}", r.errors);

        // 1,000 bytes short of the file, with a length that says so: every
        // answer is framed right and every one is a body error.
        let cut = serve_contract(Flaw::StaticTruncated);
        let r = load(&cut, requests(), 30);
        assert_eq!(r.errors.get(ErrorKind::Body), 30, "{:?}", r.errors);
        assert_eq!(r.errors.total(), 30, "{:?}", r.errors);
    }
}

#[test]
fn every_upload_answer_must_carry_its_own_body_s_digest() {
    let good = serve_contract(Flaw::None);
    let url = parse_url(&good.url("/")).unwrap();
    // Two rounds over the bodies, 1 KiB to 1 MiB each.
    let n = 2 * UPLOAD_SIZES.len() as u64;
    let r = load(&good, upload_requests(&url, true, 7), n);
    assert_eq!((r.requests, r.errors.total()), (n, 0), "{:?}", r.errors);
    assert!(
        r.bytes_written > 2 * (1 << 20),
        "{} written",
        r.bytes_written
    );

    let wrong = serve_contract(Flaw::UploadWrongDigest);
    let r = load(&wrong, upload_requests(&url, true, 7), n);
    assert_eq!(r.errors.get(ErrorKind::Body), n, "{:?}", r.errors);
}
