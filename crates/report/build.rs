//! Fetches the charting library the HTML report inlines: `npm ci` in web/
//! (versions and checksums pinned by its package-lock.json) when the files are
//! not there yet, then copies them into OUT_DIR without their source-map
//! comments, so the report never asks the network for anything.

use std::path::{Path, PathBuf};
use std::process::Command;

const FILES: [(&str, &str); 2] = [
    ("chart.js/dist/chart.umd.min.js", "chart.umd.min.js"),
    (
        "chartjs-chart-error-bars/build/index.umd.min.js",
        "error-bars.umd.min.js",
    ),
];

fn main() {
    let web = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("web");
    let modules = web.join("node_modules");
    println!("cargo:rerun-if-changed=web/package.json");
    println!("cargo:rerun-if-changed=web/package-lock.json");
    for (src, _) in FILES {
        println!("cargo:rerun-if-changed=web/node_modules/{src}");
    }
    if FILES.iter().any(|(src, _)| !modules.join(src).is_file()) || stale(&web) {
        npm_ci(&web);
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    for (src, dst) in FILES {
        let text = std::fs::read_to_string(modules.join(src))
            .unwrap_or_else(|e| panic!("reading {}: {e}", modules.join(src).display()));
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("//# sourceMappingURL="))
            .collect();
        std::fs::write(out.join(dst), kept.join("\n")).unwrap();
    }
}

/// Whether package-lock.json changed after the last install (npm keeps a
/// copy of what it installed in node_modules/.package-lock.json).
fn stale(web: &Path) -> bool {
    let modified = |p: PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (
        modified(web.join("package-lock.json")),
        modified(web.join("node_modules/.package-lock.json")),
    ) {
        (Some(lock), Some(installed)) => lock > installed,
        _ => true,
    }
}

fn npm_ci(web: &Path) {
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
        .current_dir(web)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!(
            "`npm ci` in {} failed ({s}): the HTML report needs Chart.js from the npm registry; \
             check the network and run it by hand to see why",
            web.display()
        ),
        Err(e) => panic!(
            "could not run npm ({e}): install Node.js and npm (Debian: apt-get install nodejs npm); \
             the HTML report inlines Chart.js, which npm fetches once"
        ),
    }
}
