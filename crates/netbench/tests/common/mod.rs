//! What the binary's tests share: running netbench, reading its output, and
//! checking `load --json` against its published schema.

#![allow(dead_code)]

use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Runs netbench with `args`, stdin closed, and waits for it.
pub fn netbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netbench"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("netbench runs")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Fails with every way `json` breaks schema/load-result.v1.schema.json.
pub fn assert_load_schema(json: &Value) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/load-result.v1.schema.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let problems: Vec<String> = validator.iter_errors(json).map(|e| e.to_string()).collect();
    assert!(problems.is_empty(), "{problems:?}");
}
