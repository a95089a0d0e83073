//! The servers a suite runs: manifests matched by the suite's selectors and
//! expanded into variants, checked for their toolchains, built once (and not
//! again while their sources are unchanged).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::allocator::{library_path, Allocator};
use crate::manifest::{discover, ManifestError, ServerManifest};
use crate::server::{build, BuildError};
use crate::suite::selector_matches;

/// The variant name of an A/A twin (`go-nethttp:twin`): the server's
/// default build and settings in a second process, so that a run measures
/// how far two identical servers can appear apart.
pub const TWIN: &str = "twin";

/// One server variant of a run: what a table column is.
#[derive(Debug, Clone)]
pub struct Target {
    pub dir: PathBuf,
    pub manifest: ServerManifest,
    /// "" for the server's default settings.
    pub variant: String,
    pub env: Vec<(String, String)>,
    pub args: Vec<String>,
    /// The C-level allocator it runs with; None for a runtime's own.
    pub allocator: Option<Allocator>,
}

impl Target {
    /// `go-nethttp`, or `java-jdk:nodelay` for a variant.
    pub fn label(&self) -> String {
        if self.variant.is_empty() {
            self.manifest.name.clone()
        } else {
            format!("{}:{}", self.manifest.name, self.variant)
        }
    }
}

/// Every server variant under `servers_dir` that one of `selectors` picks,
/// in name order, defaults before variants.
///
/// A server with `allocator = "glibc"` also has a generated variant per
/// replacement allocator (`c-h2o:jemalloc`), which preloads it; and its
/// default is picked by `name:glibc` as well, so `*:glibc` selects the
/// default of every server that can change allocator.
pub fn select(servers_dir: &Path, selectors: &[String]) -> Result<Vec<Target>, ManifestError> {
    let mut out = Vec::new();
    for (dir, m) in discover(servers_dir)? {
        let picks = |variant: &str| {
            selectors
                .iter()
                .any(|s| selector_matches(s, &m.name, variant))
        };
        let target = |variant: &str, env, args, allocator| Target {
            dir: dir.clone(),
            manifest: m.clone(),
            variant: variant.to_string(),
            env,
            args,
            allocator,
        };
        if picks("") || (m.allocator == Some(Allocator::Glibc) && picks("glibc")) {
            out.push(target("", Vec::new(), Vec::new(), m.allocator));
        }
        // An A/A twin: the default build and settings again, a process of
        // its own, named apart, only where a selector names it exactly
        // (`*` alone never picks it).
        let twin_named = selectors
            .iter()
            .any(|s| s.split_once(':').is_some_and(|(_, v)| v == TWIN) && picks(TWIN));
        if twin_named && !m.variants.iter().any(|v| v.name == TWIN) {
            out.push(target(TWIN, Vec::new(), Vec::new(), m.allocator));
        }
        for v in m.variants.iter().filter(|v| picks(&v.name)) {
            let env = v.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            out.push(target(&v.name, env, v.args.clone(), m.allocator));
        }
        if m.allocator.is_some() {
            for a in Allocator::PRELOADED
                .into_iter()
                .filter(|a| picks(a.as_str()))
            {
                // A library that is not installed leaves the variant without
                // it; the runner then leaves it out, saying which package.
                let env = match library_path(a) {
                    Ok(Some(lib)) => vec![("LD_PRELOAD".to_string(), lib.display().to_string())],
                    _ => Vec::new(),
                };
                out.push(target(a.as_str(), env, Vec::new(), Some(a)));
            }
        }
    }
    Ok(out)
}

fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return true; // a path in the server's folder, made by its build
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

/// The programs a manifest's commands start with that are not installed.
pub fn missing_tools(m: &ServerManifest) -> Vec<String> {
    let mut missing: Vec<String> = [&m.build, &m.run, &m.test]
        .iter()
        .filter_map(|c| c.split_whitespace().find(|w| !w.contains('=')))
        .filter(|p| !on_path(p))
        .map(str::to_string)
        .collect();
    missing.dedup();
    missing
}

/// The manifest's Debian packages that are not installed (none when this
/// is not a Debian system: there is nothing to ask).
pub fn missing_packages(m: &ServerManifest) -> Vec<String> {
    if m.packages.is_empty() || !on_path("dpkg-query") {
        return Vec::new();
    }
    m.packages
        .iter()
        .filter(|p| {
            let out = std::process::Command::new("dpkg-query")
                .args(["-W", "-f=${Status}", p.as_str()])
                .stderr(std::process::Stdio::null())
                .output();
            !out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        })
        .cloned()
        .collect()
}

/// Folders that hold build output, never sources.
const OUTPUT_DIRS: [&str; 8] = [
    "target",
    "bin",
    "node_modules",
    "build",
    "dist",
    ".git",
    "__pycache__",
    "obj",
];

/// A fingerprint of a server's sources: paths, sizes and modification times
/// of every file outside its build output.
pub fn source_fingerprint(dir: &Path) -> u64 {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, u64, u128)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                if !OUTPUT_DIRS.contains(&name.as_str()) {
                    walk(&path, root, out);
                }
            } else {
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, meta.len(), mtime));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    files.hash(&mut h);
    h.finish()
}

/// What the build cache keeps per server folder.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct CacheEntry {
    /// Of the sources the artefact was built from.
    fingerprint: u64,
    /// How long that build took.
    build_s: f64,
}

/// How a server's build went in this run.
#[derive(Debug, Clone)]
pub struct Built {
    /// How long the build of the artefact in use took: this run's build, or
    /// the earlier one it was cached from.
    pub seconds: f64,
    /// Nothing changed since the last successful build, so it was skipped.
    pub cached: bool,
    pub artefact_bytes: Option<u64>,
}

/// Builds `m` unless its sources are unchanged since the last successful
/// build recorded in `cache_file` (and its artefact is still there).
pub fn build_cached(
    dir: &Path,
    m: &ServerManifest,
    cache_file: &Path,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Built, BuildError> {
    // A cache in an older layout does not parse and is rebuilt from scratch.
    let mut cache: BTreeMap<String, CacheEntry> = std::fs::read_to_string(cache_file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let artefact = (!m.artefact.is_empty()).then(|| dir.join(&m.artefact));
    let artefact_size = || {
        artefact
            .as_ref()
            .and_then(|a| std::fs::metadata(a).ok())
            .map(|md| md.len())
    };
    let fingerprint = source_fingerprint(dir);
    let key = dir.to_string_lossy().into_owned();
    if let Some(hit) = cache.get(&key).filter(|e| e.fingerprint == fingerprint) {
        if artefact.is_none() || artefact_size().is_some() {
            return Ok(Built {
                seconds: hit.build_s,
                cached: true,
                artefact_bytes: artefact_size(),
            });
        }
    }
    let report = build(dir, m, cancel)?;
    cache.insert(
        key,
        CacheEntry {
            fingerprint,
            build_s: report.duration.as_secs_f64(),
        },
    );
    if let Some(parent) = cache_file.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Ok(text) = serde_json::to_string_pretty(&cache) {
        let _ = std::fs::write(cache_file, text);
    }
    Ok(Built {
        seconds: report.duration.as_secs_f64(),
        cached: false,
        artefact_bytes: artefact_size(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_follows_sources_not_build_output() {
        let dir = std::env::temp_dir().join(format!("netbench-fp-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("target")).unwrap();
        std::fs::write(dir.join("main.go"), "package main").unwrap();
        let a = source_fingerprint(&dir);
        std::fs::write(dir.join("target/out"), "binary").unwrap();
        assert_eq!(a, source_fingerprint(&dir));
        std::fs::write(dir.join("main.go"), "package main // changed").unwrap();
        assert_ne!(a, source_fingerprint(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cached_build_keeps_the_time_of_the_build_it_reuses() {
        let dir = std::env::temp_dir().join(format!("netbench-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("main.c"), "int main;").unwrap();
        let m: ServerManifest = toml::from_str(
            "name = \"x\"\nlanguage = \"x\"\nframework = \"x\"\ndescription = \"x\"\nmodel = \"event-loop\"\n\
             build = \"sleep 0.2; mkdir -p target; echo built > target/out\"\n\
             artefact = \"target/out\"\nrun = \"true\"\n",
        )
        .unwrap();
        let cache = dir.with_extension("cache").join("build-cache.json");
        let first = build_cached(&dir, &m, &cache, &Default::default()).unwrap();
        assert!(!first.cached && first.seconds >= 0.2, "{first:?}");
        assert_eq!(first.artefact_bytes, Some(6));
        let again = build_cached(&dir, &m, &cache, &Default::default()).unwrap();
        assert!(again.cached, "{again:?}");
        assert_eq!(again.seconds, first.seconds);
        // A cache in the old layout (fingerprints only) means a fresh build.
        std::fs::write(&cache, "{\"x\": 1}").unwrap();
        assert!(
            !build_cached(&dir, &m, &cache, &Default::default())
                .unwrap()
                .cached
        );
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(cache.parent().unwrap()).unwrap();
    }

    #[test]
    fn finds_missing_tools() {
        let mut m: ServerManifest = toml::from_str(
            "name = \"x\"\nlanguage = \"x\"\nframework = \"x\"\ndescription = \"x\"\nmodel = \"event-loop\"\nbuild = \"no-such-compiler-xyz build\"\nrun = \"./bin/server\"\n",
        )
        .unwrap();
        assert_eq!(missing_tools(&m), vec!["no-such-compiler-xyz"]);
        m.build = "FOO=1 sh -c true".into();
        assert!(missing_tools(&m).is_empty());
        m.packages = vec!["netbench-no-such-package-xyz".into()];
        if on_path("dpkg-query") {
            assert_eq!(missing_packages(&m), vec!["netbench-no-such-package-xyz"]);
        }
    }
}
