//! `Suite::parse` (suites/*.toml) on arbitrary text (bytes taken as UTF-8,
//! lossily). An accepted suite keeps the checks it promises, and overriding
//! its repetitions (`netbench run --repetitions`, which rewrites the stored
//! text) must be accepted too and mean the same suite.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netbench_suite::Suite;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let suite = match Suite::parse("fuzz", &text) {
        Ok(s) => s,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    assert!(!suite.servers.is_empty() && !suite.scenarios.is_empty());
    assert!(suite.repetitions >= 1);
    for s in &suite.scenarios {
        assert!(!s.connections.is_empty() && !s.connections.contains(&0));
        assert!(s.work_documents >= 1);
    }
    let _ = suite.cells_per_round();

    let repetitions = suite.repetitions % 7 + 1;
    let again = suite
        .clone()
        .with_repetitions(repetitions)
        .unwrap_or_else(|e| panic!("accepted, but not with repetitions = {repetitions}: {e}"));
    assert_eq!(again.repetitions, repetitions);
    assert_eq!(again.description, suite.description);
    assert_eq!(again.servers, suite.servers);
    assert_eq!(again.scenarios, suite.scenarios);
    assert_eq!(again.cooldown, suite.cooldown);
    assert_eq!(again.placement, suite.placement);
    assert_eq!(again.cell_timeout, suite.cell_timeout);
});
