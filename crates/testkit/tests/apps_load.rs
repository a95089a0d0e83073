//! The 1.2 parts under load (issue 31): the engine checks every static file,
//! every upload digest and every compressed answer it is sent, and counts a
//! flawed server's answers, one error per answer (body, or encoding for an
//! answer that is not the gzip asked for). Counts only, never speed.

use std::time::Duration;

use netbench_contract::{
    static_request, upload_requests, work_br_requests, work_gzip_requests, WorkGenerator,
    STATIC_FILES, UPLOAD_SIZES,
};
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
        session: None,
        h2: false,
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

#[test]
fn compressed_work_answers_are_decoded_and_checked_and_plain_ones_counted() {
    let cases = || WorkGenerator::new(5, 4).cases(5);
    let good = serve_contract(Flaw::None);
    let url = parse_url(&good.url("/")).unwrap();
    let r = load(&good, work_gzip_requests(&url, true, cases()), 40);
    assert_eq!((r.requests, r.errors.total()), (40, 0), "{:?}", r.errors);
    // Allowed brotli and gzip, this server answers brotli: decoded and
    // checked the same way.
    let r = load(&good, work_br_requests(&url, true, cases()), 40);
    assert_eq!((r.requests, r.errors.total()), (40, 0), "{:?}", r.errors);
    let plain = serve_contract(Flaw::GzipClaimPlain);
    let r = load(&plain, work_br_requests(&url, true, cases()), 10);
    assert_eq!(r.errors.get(ErrorKind::Encoding), 10, "{:?}", r.errors);

    // "gzip" on a plain body, and a decompression bomb: each answer an
    // encoding error, the client's memory bounded.
    for flaw in [Flaw::GzipClaimPlain, Flaw::GzipBomb] {
        let bad = serve_contract(flaw);
        let r = load(&bad, work_gzip_requests(&url, true, cases()), 10);
        assert_eq!(
            r.errors.get(ErrorKind::Encoding),
            10,
            "{flaw:?}: {:?}",
            r.errors
        );
    }
}
