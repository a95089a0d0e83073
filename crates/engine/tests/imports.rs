//! The engine's modules import each other without a circle (issue 30): a
//! module's `crate::` paths outside comments and tests are its imports, and
//! no module reaches itself through them. A circle is how the error kinds
//! once needed the plans: this test names the modules of any new one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module (`conn`, `ws::frame`) and the modules it names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for dir in [src.clone(), src.join("ws")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let name = |p: &Path| {
        let rel = p.strip_prefix(&src).unwrap().with_extension("");
        let m = rel.to_string_lossy().replace('/', "::");
        m.strip_suffix("::mod").map(str::to_string).unwrap_or(m)
    };
    let modules: BTreeSet<String> = files.iter().map(|p| name(p)).collect();
    let mut graph = BTreeMap::new();
    for p in &files {
        let me = name(p);
        if me == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        let mut deps = BTreeSet::new();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let path: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut parts = path.split("::");
                let first = parts.next().unwrap_or("");
                let two = format!("{first}::{}", parts.next().unwrap_or(""));
                if modules.contains(&two) {
                    deps.insert(two);
                } else if modules.contains(first) {
                    deps.insert(first.to_string());
                }
            }
        }
        deps.remove(&me);
        graph.insert(me, deps);
    }
    graph
}

/// Every module reachable from `from`.
fn reach(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = graph[from].iter().map(String::as_str).collect();
    while let Some(m) = todo.pop() {
        if seen.insert(m.to_string()) {
            todo.extend(graph.get(m).into_iter().flatten().map(String::as_str));
        }
    }
    seen
}

#[test]
fn no_module_of_the_engine_reaches_itself() {
    let graph = imports();
    assert!(graph.len() > 20, "read the engine's modules: {graph:?}");
    assert!(
        graph["worker"].contains("conn"),
        "imports are read: {:?}",
        graph["worker"]
    );
    let circles: Vec<String> = graph
        .keys()
        .filter(|m| reach(&graph, m).contains(*m))
        .map(|m| {
            let back: Vec<&String> = graph[m]
                .iter()
                .filter(|d| reach(&graph, d).contains(m))
                .collect();
            format!("{m} (through {back:?})")
        })
        .collect();
    assert!(
        circles.is_empty(),
        "modules in an import circle: {circles:?}"
    );
}

#[test]
fn the_hot_path_kinds_are_a_leaf() {
    let graph = imports();
    assert!(graph["error_kind"].is_empty(), "{:?}", graph["error_kind"]);
}
