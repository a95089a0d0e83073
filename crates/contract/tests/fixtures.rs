//! The reference implementation agrees with every fixture under
//! contract/fixtures, so the fixtures a server author reads are what verify
//! expects.

use std::path::Path;

use netbench_contract::answer;
use netbench_engine::BodyExpect;
use serde_json::Value;

fn lines(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../contract/fixtures")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("each fixture line is JSON"))
        .collect()
}

#[test]
fn work_fixtures_get_their_answers() {
    let cases = lines("work.jsonl");
    assert!(cases.len() >= 4);
    for c in cases {
        let body = serde_json::to_vec(&c["request"]).unwrap();
        let got = answer(&body).unwrap_or_else(|e| panic!("{}: {e}", c["name"]));
        let want = BodyExpect::json(c["answer"].clone());
        assert!(
            want.matches(&serde_json::to_vec(&got).unwrap()),
            "{}: got {got}",
            c["name"]
        );
    }
}

#[test]
fn rejected_fixtures_are_rejected() {
    let cases = lines("rejected.jsonl");
    assert!(cases.len() >= 10);
    for c in cases {
        let body = c["body"].as_str().unwrap();
        assert!(
            answer(body.as_bytes()).is_err(),
            "{} was accepted",
            c["name"]
        );
    }
}
