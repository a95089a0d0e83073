//! Scale-out against servers on 127.0.0.1:0: connections spread over source
//! addresses, histogram files read back unchanged, and merges that are exact
//! (the merged histogram equals one fed every part's values).

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener};
use std::sync::{Arc, Mutex};

use common::*;
use hdrhistogram::Histogram;
use netbench_engine::*;
use netbench_testkit::{serve, Behavior};

/// A keep-alive server answering `OK` that counts connections per peer
/// address.
fn peer_counting_server() -> (std::net::SocketAddr, Arc<Mutex<HashMap<IpAddr, usize>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let peers = Arc::new(Mutex::new(HashMap::new()));
    let seen = Arc::clone(&peers);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let peer = stream.peer_addr().unwrap().ip();
            *seen.lock().unwrap().entry(peer).or_insert(0) += 1;
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let mut pending = Vec::new();
                loop {
                    let n = match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        let answer = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nOK";
                        if stream.write_all(answer).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (addr, peers)
}

#[test]
fn connections_go_round_robin_over_the_source_addresses() {
    let (addr, peers) = peer_counting_server();
    let mut plan = count_plan(addr, 8, 2, 400);
    plan.sources = (2..=5).map(|i| IpAddr::from([127, 0, 0, i])).collect();
    let r = run_plan(&plan);
    assert_eq!(r.requests, 400);
    assert_eq!(r.errors.total(), 0);
    assert_eq!(r.connections_answered, 8, "every connection was answered");
    let peers = peers.lock().unwrap();
    let mut got: Vec<(IpAddr, usize)> = peers.iter().map(|(a, n)| (*a, *n)).collect();
    got.sort();
    let want: Vec<(IpAddr, usize)> = (2..=5).map(|i| (IpAddr::from([127, 0, 0, i]), 2)).collect();
    assert_eq!(got, want);
}

#[test]
fn a_source_of_the_wrong_family_is_refused_before_running() {
    let mut plan = count_plan("127.0.0.1:9".parse().unwrap(), 1, 1, 1);
    plan.sources = vec!["::1".parse().unwrap()];
    assert_eq!(plan.validate(), Err(PlanError::SourceFamily));
}

/// The same values, recorded one by one into a single histogram.
fn fed_with_values_of(parts: &[&Histogram<u64>]) -> Histogram<u64> {
    let mut single = Histogram::new_from(parts[0]);
    for h in parts {
        for v in h.iter_recorded() {
            single
                .record_n(v.value_iterated_to(), v.count_at_value())
                .unwrap();
        }
    }
    single
}

#[test]
fn parts_read_back_unchanged_and_merge_exactly() {
    let server = serve(Behavior::Good);
    let plans = [
        count_plan(server.addr, 2, 1, 300),
        count_plan(server.addr, 3, 1, 500),
        count_plan(server.addr, 5, 2, 700),
    ];
    let mut parts = Vec::new();
    for (i, plan) in plans.iter().enumerate() {
        let result = run_plan(plan);
        let mut file = Vec::new();
        let context = serde_json::json!({ "url": server.url("/") });
        write_part(&mut file, context.clone(), &PlanSummary::of(plan), &result).unwrap();
        let back = read_part(&file).unwrap();
        assert_eq!(back.context, context);
        assert_eq!(back.plan, PlanSummary::of(plan));
        assert_eq!(back.result.latency_histogram, result.latency_histogram);
        assert_eq!(back.result.connect_histogram, result.connect_histogram);
        assert_eq!(back.result.requests, result.requests);
        assert_eq!(back.result.window_unix_ns, result.window_unix_ns);
        assert_eq!(back.result.verdict, result.verdict);
        // The file is an HdrHistogram interval log a stock reader takes.
        let text = String::from_utf8(file).unwrap();
        assert!(text.contains("\nTag=latency,0.000,"), "{text}");
        assert!(text.contains("#[BaseTime: "), "{text}");
        parts.push(Part {
            label: format!("part {i}"),
            result: back.result,
        });
    }
    let p50s: Vec<f64> = parts.iter().map(|p| p.result.latency.p50_ns).collect();
    let histograms: Vec<Histogram<u64>> = parts
        .iter()
        .map(|p| p.result.latency_histogram.clone().unwrap())
        .collect();
    let merged = merge_parts(parts.clone(), true, true, 1).unwrap();

    assert_eq!(merged.requests, 1500, "the total is the sum of the parts");
    assert_eq!(merged.latency.count, 1500);
    assert_eq!(merged.configured_connections, 10);
    assert_eq!(merged.connections_answered, 10);
    assert_eq!(merged.workers.len(), 4);
    assert_eq!(merged.parts.len(), 3);
    let lo = p50s.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = p50s.iter().copied().fold(0.0, f64::max);
    assert!(
        (lo..=hi).contains(&merged.latency.p50_ns),
        "merged p50 {} outside the parts' {lo}..{hi}",
        merged.latency.p50_ns
    );
    let refs: Vec<&Histogram<u64>> = histograms.iter().collect();
    assert_eq!(
        merged.latency_histogram.as_ref().unwrap(),
        &fed_with_values_of(&refs),
        "the merged histogram is the one every value would have made"
    );
    // Sequential parts: throughput is over the union of their windows, not
    // over the span from the first start to the last end.
    let windows: Vec<[u64; 2]> = parts.iter().map(|p| p.result.window_unix_ns).collect();
    let union = union_len_ns(&windows) as f64 / 1e9;
    assert!((merged.duration_s - union).abs() < 1e-9);
    assert!((merged.rps - 1500.0 / union).abs() < 1e-6);
}

#[test]
fn a_client_bound_part_flags_the_whole() {
    let server = serve(Behavior::Good);
    let a = run_plan(&count_plan(server.addr, 2, 1, 100));
    let mut b = run_plan(&count_plan(server.addr, 2, 1, 100));
    // Its evidence says so (a stored flag alone is not trusted: the merge
    // judges each part again), over a window long enough to be judged.
    b.workers[0].loop_busy = 0.99;
    b.workers[0].wall_s = b.workers[0].wall_s.max(1.0);
    let merged = merge_parts(
        vec![
            Part {
                label: "a".into(),
                result: a.clone(),
            },
            Part {
                label: "b".into(),
                result: b,
            },
        ],
        true,
        true,
        1,
    )
    .unwrap();
    assert!(merged.verdict.client_bound);
    assert!(merged
        .verdict
        .reasons
        .iter()
        .any(|r| r == "b was client-bound"));
    assert!(
        merged.parts[1].verdict.client_bound,
        "each part keeps its verdict"
    );

    let mut bare = a;
    bare.latency_histogram = None;
    let err = merge_parts(
        vec![Part {
            label: "x.json".into(),
            result: bare,
        }],
        true,
        true,
        1,
    )
    .unwrap_err();
    assert!(err.to_string().contains("--histogram-out"), "{err}");
    assert!(matches!(
        merge_parts(Vec::new(), true, true, 1),
        Err(MergeError::NoParts)
    ));
}

#[test]
fn a_file_that_is_not_a_part_says_so() {
    assert!(matches!(read_part(b"hello\n"), Err(PartError::NotAPart)));
    let other = b"#netbench {\"format\":\"netbench-part/9\"}\n";
    let err = read_part(other).unwrap_err();
    assert!(err.to_string().contains("netbench-part/9"), "{err}");
}
