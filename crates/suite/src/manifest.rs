//! `servers/<name>/server.toml`: what a server is and how to build and run it
//! (contract/CONTRACT.md, "Manifest").

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use netbench_records::server::{Model, Offer, Tier};
use serde::{Deserialize, Deserializer};

/// How long a build or test step may take when its manifest does not say:
/// long enough for a cold Maven or cargo build on two cores, short enough
/// that a hung step does not stall a run for good.
pub const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(20 * 60);

fn duration_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    match crate::suite::parse_duration(&text) {
        Ok(t) if !t.is_zero() => Ok(Some(t)),
        Ok(_) => Err(serde::de::Error::custom(
            "a duration here must be above zero",
        )),
        Err(e) => Err(serde::de::Error::custom(format!(
            "`{text}` is not a duration: {e}"
        ))),
    }
}

impl ServerManifest {
    pub fn build_timeout(&self) -> Duration {
        self.build_timeout.unwrap_or(DEFAULT_STEP_TIMEOUT)
    }

    pub fn test_timeout(&self) -> Duration {
        self.test_timeout.unwrap_or(DEFAULT_STEP_TIMEOUT)
    }
}

/// One server's manifest, as written in its folder.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerManifest {
    pub name: String,
    pub language: String,
    #[serde(default)]
    pub language_version: String,
    pub framework: String,
    #[serde(default)]
    pub framework_version: String,
    /// The I/O and threading model, in a sentence or two.
    pub description: String,
    /// The threading model, from a closed list, so reports can group by it.
    pub model: Model,
    /// `default` for a manifest; `tuned` only on a variant.
    #[serde(default)]
    pub tier: Tier,
    /// `glibc` for a server that allocates through the C library's malloc
    /// (C, C++, Rust, Pascal with cmem): it then also runs with each
    /// replacement allocator (crate::allocator). None for a runtime with its
    /// own allocator (Go, the JVM, V8, CPython).
    #[serde(default)]
    pub allocator: Option<crate::allocator::Allocator>,
    /// The framework's home page.
    #[serde(default)]
    pub website: String,
    /// Debian packages the build or the run needs.
    #[serde(default)]
    pub packages: Vec<String>,
    /// Shell command run in the server's folder; empty when there is nothing
    /// to build.
    #[serde(default)]
    pub build: String,
    /// Shell command run in the server's folder with HOST and PORT set.
    pub run: String,
    /// Shell command that runs the server's own tests in its folder (after
    /// `build`); empty when it has none.
    #[serde(default)]
    pub test: String,
    /// What the build produces (a path in the server's folder), for its size.
    #[serde(default)]
    pub artefact: String,
    /// The longest the build may take (a duration such as `"20m"`).
    #[serde(default, deserialize_with = "duration_opt")]
    pub build_timeout: Option<Duration>,
    /// The longest the server's own tests may take.
    #[serde(default, deserialize_with = "duration_opt")]
    pub test_timeout: Option<Duration>,
    /// Other ways to run the same server (another allocator, thread count or
    /// I/O model), each a named set of environment variables and arguments.
    #[serde(default)]
    pub variants: Vec<Variant>,
    /// The optional parts of the contract (1.1) the server has; a cell of a
    /// part it does not offer is left out and reported as such, never failed.
    #[serde(default)]
    pub offers: Vec<Offer>,
    /// The runtime compiles the server's code while it runs and may sit
    /// on a flat start-up plateau for seconds before its compiled code
    /// takes over (HotSpot): a suite that warms until steady warms a fresh
    /// process of it the trend test's whole look-back first. V8 reaches
    /// its plateau within a second here (the Node servers' warm-up
    /// curves), so the Node servers leave it out.
    #[serde(default)]
    pub jit: bool,
    /// A fresh process of this server warms at least this long before it
    /// is measured, even once the steady-state rule has settled it: for a
    /// runtime measured to sit on a plateau and then climb again, which no
    /// rule over the curve so far can foresee (java-spring: flat at about
    /// 9,500 requests/s from 15 to 35 s, then 12,000 to 20,000 by 60 s,
    /// bench/jvm_warm.py, 2026-11-26). At most [`WARM_MIN_LIMIT`].
    #[serde(default, deserialize_with = "duration_opt")]
    pub warm_min: Option<Duration>,
}

/// The longest `warm_min` a manifest may ask for: well inside a suite's
/// default `cell_timeout` of 5 minutes.
pub const WARM_MIN_LIMIT: Duration = Duration::from_secs(180);

impl ServerManifest {
    pub fn offers(&self, part: Offer) -> bool {
        self.offers.contains(&part)
    }
}

/// One `[[variants]]` entry of a manifest.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub description: String,
    /// Set when the variant runs another threading model than the server's.
    #[serde(default)]
    pub model: Option<Model>,
    /// `tuned` when the variant applies documented production tuning.
    #[serde(default)]
    pub tier: Tier,
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a valid manifest: {message}; see contract/CONTRACT.md, \"Manifest\"")]
    Invalid { path: PathBuf, message: String },
}

/// Reads and checks `dir/server.toml`.
pub fn load_manifest(dir: &Path) -> Result<ServerManifest, ManifestError> {
    let path = dir.join("server.toml");
    let text = std::fs::read_to_string(&path).map_err(|source| ManifestError::Read {
        path: path.clone(),
        source,
    })?;
    let folder = dir.file_name().and_then(|f| f.to_str()).unwrap_or("");
    parse_manifest(&path, folder, &text)
}

/// Checks a manifest's text; `folder` is the name of the folder it is in,
/// `path` only names it in errors.
pub fn parse_manifest(
    path: &Path,
    folder: &str,
    text: &str,
) -> Result<ServerManifest, ManifestError> {
    let invalid = |message: String| ManifestError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let m: ServerManifest =
        toml::from_str(text).map_err(|e| invalid(crate::toml_error::describe(text, &e)))?;
    if m.name != folder {
        return Err(invalid(format!(
            "name `{}` differs from its folder `{folder}`",
            m.name
        )));
    }
    if m.run.trim().is_empty() {
        return Err(invalid("`run` is empty".to_string()));
    }
    if m.tier != Tier::Default {
        return Err(invalid(
            "`tier = \"tuned\"` belongs on a variant; the server itself runs with its framework's defaults".to_string(),
        ));
    }
    match m.allocator {
        None | Some(crate::allocator::Allocator::Glibc) => {}
        Some(other) => {
            return Err(invalid(format!(
                "`allocator = \"{other}\"`: a server's own allocator is `glibc` (or unset for a runtime with its own); {other} is a generated variant of every glibc server"
            )))
        }
    }
    for v in &m.variants {
        if crate::allocator::Allocator::parse(&v.name).is_some() {
            return Err(invalid(format!(
                "variant `{}` has an allocator's name, which belongs to the generated allocator variants: say `allocator = \"glibc\"` on the server instead, or rename the variant",
                v.name
            )));
        }
        if v.env.contains_key("LD_PRELOAD") {
            return Err(invalid(format!(
                "variant `{}` sets LD_PRELOAD; say `allocator = \"glibc\"` on the server and the runner preloads each allocator itself, and checks it took",
                v.name
            )));
        }
        if let Some(key) = v.env.keys().find(|k| matches!(k.as_str(), "HOST" | "PORT")) {
            return Err(invalid(format!(
                "variant `{}` sets {key}; the runner alone chooses where a server listens (loopback, a free port)",
                v.name
            )));
        }
    }
    if m.warm_min
        .is_some_and(|d| d.is_zero() || d > WARM_MIN_LIMIT)
    {
        return Err(invalid(format!(
            "`warm_min` must be above zero and at most {} s (a suite's cells time out after 5 minutes by default)",
            WARM_MIN_LIMIT.as_secs()
        )));
    }
    let mut offers = m.offers.clone();
    offers.sort_unstable();
    if offers.windows(2).any(|w| w[0] == w[1]) {
        return Err(invalid("`offers` names a part twice".to_string()));
    }
    if offers.contains(&Offer::H2) && !offers.contains(&Offer::Tls) {
        return Err(invalid(
            "`offers` names h2 without tls: h2 is HTTP/2 on the TLS listener (CONTRACT.md, version 1.5); add tls, or offer h2c".to_string(),
        ));
    }
    let mut names: Vec<&str> = m.variants.iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) || names.iter().any(|n| n.is_empty()) {
        return Err(invalid(
            "variant names must be unique and not empty".to_string(),
        ));
    }
    Ok(m)
}

/// Every server folder under `servers_dir` (those with a server.toml), by name.
pub fn discover(servers_dir: &Path) -> Result<Vec<(PathBuf, ServerManifest)>, ManifestError> {
    let entries = std::fs::read_dir(servers_dir).map_err(|source| ManifestError::Read {
        path: servers_dir.to_path_buf(),
        source,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("server.toml").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|d| load_manifest(&d).map(|m| (d, m)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("server.toml"), text).unwrap();
        d
    }

    #[test]
    fn warm_min_is_a_bounded_duration() {
        let head = "name = \"w\"\nlanguage = \"Java\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\n";
        let path = Path::new("servers/w/server.toml");
        let m = parse_manifest(path, "w", &format!("{head}warm_min = \"55s\"\n")).unwrap();
        assert_eq!(m.warm_min, Some(Duration::from_secs(55)));
        assert_eq!(parse_manifest(path, "w", head).unwrap().warm_min, None);
        let zero = parse_manifest(path, "w", &format!("{head}warm_min = \"0s\"\n"));
        assert!(zero.unwrap_err().to_string().contains("above zero"));
        for bad in ["181s", "10m"] {
            let e = parse_manifest(path, "w", &format!("{head}warm_min = \"{bad}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("at most 180 s"), "{bad}: {e}");
        }
        assert!(parse_manifest(path, "w", &format!("{head}warm_min = \"soon\"\n")).is_err());
    }

    #[test]
    fn the_parts_of_version_1_2_are_offered_and_unknown_ones_refused_saying_why() {
        let head = "name = \"o\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\n";
        let path = Path::new("servers/o/server.toml");
        let m = parse_manifest(
            path,
            "o",
            &format!("{head}offers = [\"static\", \"upload\", \"json-comp\", \"ws\", \"app\"]\n"),
        )
        .unwrap();
        assert!(m.offers(Offer::Static) && m.offers(Offer::Upload) && m.offers(Offer::JsonComp));
        assert!(m.offers(Offer::App));
        assert!(!m.offers(Offer::Db));
        for (offers, says) in [
            ("[\"gzip\"]", "unknown part `gzip`"),
            ("[\"static\", \"static\"]", "names a part twice"),
            ("[\"h2\"]", "h2 without tls"),
        ] {
            let e = parse_manifest(path, "o", &format!("{head}offers = {offers}\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{offers}: {e}");
        }
    }

    #[test]
    fn reads_and_checks_manifests() {
        let tmp = std::env::temp_dir().join(format!("netbench-manifest-{}", std::process::id()));
        let ok = write(
            &tmp,
            "demo",
            "name = \"demo\"\nlanguage = \"Go\"\nframework = \"net/http\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"./bin/server\"\n",
        );
        let m = load_manifest(&ok).unwrap();
        assert_eq!(m.name, "demo");
        assert!(m.build.is_empty());
        assert!(m.variants.is_empty());

        let with_variants = write(
            &tmp,
            "vary",
            "name = \"vary\"\nlanguage = \"C\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\n\
             allocator = \"glibc\"\n\
             [[variants]]\nname = \"fast\"\nenv = { MODE = \"fast\" }\n\
             [[variants]]\nname = \"threads-1\"\nargs = [\"--threads\", \"1\"]\n",
        );
        let m = load_manifest(&with_variants).unwrap();
        assert_eq!(m.variants.len(), 2);
        assert_eq!(m.allocator, Some(crate::allocator::Allocator::Glibc));
        assert_eq!(m.variants[0].env["MODE"], "fast");
        assert_eq!(m.variants[1].args, ["--threads", "1"]);

        // Allocators go through the checked, generated variants only.
        let head = "language = \"C\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\n";
        for (name, extra, says) in [
            (
                "preload",
                "[[variants]]\nname = \"mi\"\nenv = { LD_PRELOAD = \"libmimalloc.so.2\" }\n",
                "LD_PRELOAD",
            ),
            (
                "named",
                "[[variants]]\nname = \"jemalloc\"\n",
                "allocator's name",
            ),
            ("topje", "", "generated variant"),
        ] {
            let top = if name == "topje" {
                "allocator = \"jemalloc\"\n"
            } else {
                ""
            };
            let d = write(
                &tmp,
                name,
                &format!("name = \"{name}\"\n{head}{top}{extra}"),
            );
            let e = load_manifest(&d).unwrap_err().to_string();
            assert!(e.contains(says), "{name}: {e}");
        }
        let typo = write(
            &tmp,
            "alloctypo",
            &format!("name = \"alloctypo\"\n{head}allocator = \"ptmalloc\"\n"),
        );
        assert!(load_manifest(&typo)
            .unwrap_err()
            .to_string()
            .contains("glibc"));

        let wrong_name = write(&tmp, "other", "name = \"demo\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\n");
        assert!(load_manifest(&wrong_name)
            .unwrap_err()
            .to_string()
            .contains("differs from its folder"));
        let unknown = write(&tmp, "typo", "name = \"typo\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\nbuidl = \"x\"\n");
        assert!(load_manifest(&unknown)
            .unwrap_err()
            .to_string()
            .contains("buidl"));
        let no_run = write(&tmp, "norun", "name = \"norun\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \" \"\n");
        assert!(load_manifest(&no_run).is_err());

        let bad_model = write(&tmp, "badmodel", "name = \"badmodel\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loopz\"\nrun = \"x\"\n");
        assert!(
            load_manifest(&bad_model)
                .unwrap_err()
                .to_string()
                .contains("thread-per-connection"),
            "the error lists the models"
        );
        let tuned_top = write(&tmp, "tunedtop", "name = \"tunedtop\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\ntier = \"tuned\"\nrun = \"x\"\n");
        assert!(load_manifest(&tuned_top)
            .unwrap_err()
            .to_string()
            .contains("variant"));

        let binds = write(&tmp, "binds", "name = \"binds\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\n[[variants]]\nname = \"open\"\nenv = { HOST = \"0.0.0.0\" }\n");
        assert!(load_manifest(&binds)
            .unwrap_err()
            .to_string()
            .contains("sets HOST"));
        let slow = write(&tmp, "slow", "name = \"slow\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\nbuild_timeout = \"90s\"\n");
        let m = load_manifest(&slow).unwrap();
        assert_eq!(m.build_timeout(), Duration::from_secs(90));
        assert_eq!(m.test_timeout(), DEFAULT_STEP_TIMEOUT);
        let zero = write(&tmp, "zero", "name = \"zero\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\ntest_timeout = \"0s\"\n");
        let e = load_manifest(&zero).unwrap_err().to_string();
        assert!(e.contains("above zero") && e.contains("line 7"), "{e}");

        assert!(discover(&tmp).is_err(), "one bad manifest fails discovery");
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
