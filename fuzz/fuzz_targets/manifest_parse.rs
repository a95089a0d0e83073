//! `parse_manifest` (servers/<name>/server.toml) on arbitrary text (bytes
//! taken as UTF-8, lossily). The folder is the text's own `name` when it has
//! one, so that the fuzzer gets past the name-equals-folder check to the
//! rest. An accepted manifest keeps the checks it promises.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use netbench_suite::{parse_manifest, Tier};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let folder = toml::from_str::<toml::Table>(&text)
        .ok()
        .and_then(|t| t.get("name")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "fuzz".to_string());
    let path = Path::new("servers/fuzz/server.toml");
    let m = match parse_manifest(path, &folder, &text) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    assert_eq!(m.name, folder);
    assert!(!m.run.trim().is_empty());
    assert_eq!(m.tier, Tier::Default);
    let mut names: Vec<&str> = m.variants.iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    assert!(names.iter().all(|n| !n.is_empty()));
    assert!(
        names.windows(2).all(|w| w[0] != w[1]),
        "variant names repeat"
    );
});
