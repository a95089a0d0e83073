//! The JSON output against the schema checked into the repository, for every
//! shape a result can take (closed and open loop, duration and count, errors,
//! interruption), and a schema that refuses what it must.

use std::time::Duration;

use netbench_engine::*;
use netbench_report::{load_json, LoadContext, LOAD_SCHEMA_VERSION};
use netbench_testkit::{serve, Behavior};
use serde_json::Value;

fn validator() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/load-result.v1.schema.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("the schema itself is valid")
}

fn plan(addr: std::net::SocketAddr, stop: Stop, pacing: Pacing) -> LoadPlan {
    let url = parse_url(&format!("http://{addr}/")).unwrap();
    LoadPlan {
        sources: Vec::new(),
        io: Default::default(),
        addr,
        connections: 3,
        workers: 2,
        stop,
        pacing,
        warmup: Duration::from_millis(50),
        timeout: Duration::from_millis(300),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        requests: vec![RequestTemplate {
            bytes: build_request(&RequestParts {
                method: "GET",
                url: &url,
                headers: &[],
                body: b"",
                keepalive: true,
            }),
            is_head: false,
            expect: Expect::default(),
        }],
        ws: None,
        tls: None,
        session: None,
        h2: false,
    }
}

fn check(plan: &LoadPlan) -> Value {
    let result = run(plan, &RunControl::new(plan)).unwrap();
    let ctx = LoadContext {
        url: "http://test/",
        method: "GET",
        plan,
        distinct_requests: plan.requests.len(),
        work: Some(netbench_report::WorkSource {
            documents: 1,
            dates: 10,
            seed: 42,
        }),
    };
    let json = load_json(&ctx, &result);
    let v = validator();
    let problems: Vec<String> = v
        .iter_errors(&json)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}\n{json:#}");
    json
}

#[test]
fn every_shape_of_result_matches_the_schema() {
    let good = serve(Behavior::Good);
    let json = check(&plan(good.addr, Stop::Count(50), Pacing::Closed));
    assert_eq!(json["schema_version"], LOAD_SCHEMA_VERSION);
    assert_eq!(json["requests"], 50);
    assert_eq!(json["attempts"], 50);
    assert!(json["rate"].is_null());

    let json = check(&plan(
        good.addr,
        Stop::After(Duration::from_millis(300)),
        Pacing::Open { per_second: 200.0 },
    ));
    assert_eq!(json["rate"]["target"], 200.0);
    assert_eq!(json["settings"]["stop"]["duration_s"], 0.3);

    let bad = serve(Behavior::Status(503));
    let json = check(&plan(bad.addr, Stop::Count(10), Pacing::Closed));
    assert_eq!(json["errors"]["status"], 10);
    assert_eq!(json["error_rate"], 1.0);
    assert_eq!(json["latency_us"]["p50"], 0.0);
    assert_eq!(json["unit"], "requests");
    assert!(json["settings"]["ws"].is_null());

    // A WebSocket run against a server without it: every attempt is a
    // handshake error, named in the errors, counted in messages.
    let mut ws = plan(bad.addr, Stop::Count(4), Pacing::Closed);
    ws.requests.clear();
    ws.ws = Some(WsPlan {
        path: "/ws".into(),
        host: "test".into(),
        message_size: 10,
        binary: false,
    });
    let json = check(&ws);
    assert_eq!(json["unit"], "messages");
    assert_eq!(json["errors"]["ws_handshake"], 4);
    assert_eq!(json["settings"]["distinct_requests"], 0);
    assert_eq!(json["settings"]["ws"]["message_size"], 10);

    // Nothing measured (a server that never answers, cut off by the run's
    // end): the verdict is not judged (issue 27).
    let silent = serve(Behavior::Silent);
    let json = check(&plan(
        silent.addr,
        Stop::After(Duration::from_millis(100)),
        Pacing::Closed,
    ));
    assert_eq!(json["attempts"], 0);
    assert_eq!(json["verdict"]["judged"], false);
    assert_eq!(json["verdict"]["client_bound"], false);
}

#[test]
fn the_schema_refuses_a_broken_document() {
    let good = serve(Behavior::Good);
    let p = plan(good.addr, Stop::Count(5), Pacing::Closed);
    let mut json = check(&p);
    let v = validator();
    json["errors"]["oops"] = 1.into();
    assert!(!v.is_valid(&json));
    json["errors"].as_object_mut().unwrap().remove("oops");
    assert!(v.is_valid(&json));
    json["verdict"].as_object_mut().unwrap().remove("judged");
    assert!(!v.is_valid(&json));
    json.as_object_mut().unwrap().remove("verdict");
    assert!(!v.is_valid(&json));
}
