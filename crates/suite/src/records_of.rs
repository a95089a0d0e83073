//! The typed records a run stores of its suite and its servers
//! (`netbench_records::ScenarioRecord`, `ServerFacts`), made from the suite
//! and the manifests when a run begins, and from the stored texts for runs
//! stored before the records existed (the store's migration to schema 9).
//! The only place that reads those texts back.

use netbench_records::{ScenarioRecord, ServerFacts};

use crate::environment::tool_for_language;
use crate::kinds::Kind;
use crate::manifest::{Model, Offer, Tier};
use crate::suite::{Scenario, Suite};

/// The scenario without its name and placement: two scenarios equal here
/// measure the same cells in different places.
fn unplaced(s: &Scenario) -> Scenario {
    Scenario {
        name: String::new(),
        placement: Default::default(),
        bandwidth: None,
        ..s.clone()
    }
}

/// Each scenario of the suite, in its order.
pub fn scenario_records(suite: &Suite) -> Vec<ScenarioRecord> {
    suite
        .scenarios
        .iter()
        .enumerate()
        .map(|(position, sc)| {
            let key = unplaced(sc);
            let same_cells_as = suite
                .scenarios
                .iter()
                .find(|other| unplaced(other) == key)
                .map_or_else(|| sc.name.clone(), |first| first.name.clone());
            ScenarioRecord {
                position: position as u32,
                name: sc.name.clone(),
                kind: sc.kind.name().to_string(),
                endpoint: sc.endpoint.name().to_string(),
                connections: sc.connections.clone(),
                keepalive: sc.keepalive,
                requests_per_connection: match sc.kind {
                    Kind::ShortLived {
                        requests_per_connection,
                    } => Some(requests_per_connection),
                    _ => None,
                },
                needs: sc.needs(),
                placement: sc.placement,
                bandwidth: sc.bandwidth,
                same_cells_as,
                protocol: sc.protocol,
                streams: sc.streams,
            }
        })
        .collect()
}

/// The scenarios of a stored suite file; empty when the file no longer
/// parses (a run stored by an older netbench): the reports then tell the
/// kinds apart by the facts alone.
pub fn scenario_records_of_text(suite: &str, suite_toml: &str) -> Vec<ScenarioRecord> {
    Suite::parse(suite, suite_toml)
        .map(|s| scenario_records(&s))
        .unwrap_or_default()
}

/// What a manifest's text says of a server variant. Read field by field,
/// not as a [`crate::ServerManifest`]: a manifest stored by an older
/// netbench may lack what today's requires (its model) and must still give
/// its language and framework. The toolchain is the run's, added by
/// [`with_toolchain`].
pub fn server_facts(manifest_toml: &str, variant: &str) -> ServerFacts {
    let manifest: toml::Table = toml::from_str(manifest_toml).unwrap_or_default();
    let text = |t: &toml::Table, key: &str| -> String {
        t.get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let variant_table: Option<&toml::Table> = manifest
        .get("variants")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_table())
        .find(|v| !variant.is_empty() && text(v, "name") == variant);
    let model = variant_table
        .and_then(|v| v.get("model"))
        .or_else(|| manifest.get("model"))
        .and_then(|v| v.as_str())
        .and_then(Model::parse);
    // A variant's tier is its own: it does not inherit the server's.
    let tier = match variant_table {
        Some(v) => v.get("tier"),
        None => manifest.get("tier"),
    }
    .and_then(|v| v.as_str())
    .and_then(Tier::parse)
    .unwrap_or_default();
    let offers = manifest
        .get("offers")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().and_then(Offer::parse))
        .collect();
    ServerFacts {
        language: text(&manifest, "language"),
        language_version: text(&manifest, "language_version"),
        toolchain: None,
        framework: text(&manifest, "framework"),
        framework_version: text(&manifest, "framework_version"),
        model,
        tier,
        website: text(&manifest, "website"),
        description: match variant_table {
            Some(v) => text(v, "description"),
            None => text(&manifest, "description"),
        },
        offers,
    }
}

/// The facts with the version of the toolchain that built and ran the
/// server in this run, from the run's environment (`tools`), when it is
/// not known yet.
pub fn with_toolchain(mut facts: ServerFacts, environment: &serde_json::Value) -> ServerFacts {
    if facts.toolchain.is_none() {
        facts.toolchain = tool_for_language(&facts.language)
            .and_then(|t| environment["tools"][t].as_str())
            .and_then(version_in);
    }
    facts
}

/// The first version number in a tool's `--version` line:
/// "go version go1.26.8 linux/amd64" → "1.26.8".
fn version_in(line: &str) -> Option<String> {
    line.split_whitespace().find_map(|token| {
        let t = token.trim_matches(|c: char| "\"'()".contains(c));
        let t = t
            .strip_prefix("go")
            .or_else(|| t.strip_prefix('v'))
            .unwrap_or(t);
        let end = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let v = t[..end].trim_end_matches('.');
        (v.contains('.') && v.starts_with(|c: char| c.is_ascii_digit())).then(|| v.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_toolchain_version_comes_from_the_tools_own_line() {
        for (line, v) in [
            ("go version go1.26.8 linux/amd64", "1.26.8"),
            ("rustc 1.95.0 (59807616e 2026-04-14)", "1.95.0"),
            ("openjdk version \"17.0.15\" 2025-04-15", "17.0.15"),
            ("v20.20.2", "20.20.2"),
            ("Python 3.11.7", "3.11.7"),
            ("gcc (Debian 12.2.0-14+deb12u1) 12.2.0", "12.2.0"),
        ] {
            assert_eq!(version_in(line).as_deref(), Some(v), "{line}");
        }
        assert_eq!(version_in("no version here 7"), None);
        let env = serde_json::json!({"tools": {"go": "go version go1.26.8 linux/amd64"}});
        let go = server_facts("language = \"Go\"\n", "");
        assert_eq!(
            with_toolchain(go.clone(), &env).toolchain.as_deref(),
            Some("1.26.8")
        );
        assert_eq!(with_toolchain(go, &serde_json::Value::Null).toolchain, None);
    }

    const ZOO: &str = "name = \"z\"\nlanguage = \"Rust\"\nframework = \"axum\"\n\
        framework_version = \"0.8\"\ndescription = \"tokio\"\nmodel = \"work-stealing\"\n\
        website = \"https://github.com/tokio-rs/axum\"\nrun = \"x\"\noffers = [\"db\"]\n\
        [[variants]]\nname = \"current-thread\"\ndescription = \"one thread\"\n\
        model = \"event-loop\"\n\
        [[variants]]\nname = \"tuned\"\ntier = \"tuned\"\nenv = { A = \"1\" }\n";

    #[test]
    fn model_tier_website_framework_and_offers_come_from_the_manifest() {
        let base = server_facts(ZOO, "");
        assert_eq!(base.model, Some(Model::WorkStealing));
        assert_eq!(base.tier, Tier::Default);
        assert_eq!(base.website, "https://github.com/tokio-rs/axum");
        assert_eq!(
            (base.framework.as_str(), base.framework_version.as_str()),
            ("axum", "0.8")
        );
        assert_eq!(base.description, "tokio");
        assert_eq!(base.offers, vec![Offer::Db]);

        // A variant that sets its own model runs that one.
        let single = server_facts(ZOO, "current-thread");
        assert_eq!(single.model, Some(Model::EventLoop));
        assert_eq!(single.tier, Tier::Default);
        assert_eq!(single.description, "one thread");
        assert_eq!(single.website, base.website);
        assert_eq!(single.framework_version, "0.8");
        // One that does not keeps the server's, and may be tuned.
        let tuned = server_facts(ZOO, "tuned");
        assert_eq!(tuned.model, Some(Model::WorkStealing));
        assert_eq!(tuned.tier, Tier::Tuned);
    }

    #[test]
    fn a_manifest_stored_before_models_still_gives_the_rest() {
        // Stored by an older netbench: no model, tier, website or framework
        // version; ServerManifest would refuse it now.
        let old = "name = \"g\"\nlanguage = \"Go\"\nlanguage_version = \"1.22\"\n\
                   framework = \"net/http\"\ndescription = \"d\"\nrun = \"x\"\n\
                   [[variants]]\nname = \"procs-1\"\n";
        assert!(toml::from_str::<crate::ServerManifest>(old).is_err());
        for variant in ["", "procs-1"] {
            let f = server_facts(old, variant);
            assert_eq!(f.model, None);
            assert_eq!(f.tier, Tier::Default);
            assert_eq!(
                (f.language.as_str(), f.language_version.as_str()),
                ("Go", "1.22")
            );
            assert_eq!(f.framework, "net/http");
            assert_eq!(f.framework_version, "");
            assert_eq!(f.website, "");
        }
        // A model this netbench does not know is unknown too, not an error;
        // so is text that is no manifest at all.
        let future = old.replace("run = ", "model = \"quantum\"\nrun = ");
        let f = server_facts(&future, "");
        assert_eq!((f.model, f.language.as_str()), (None, "Go"));
        assert_eq!(server_facts("not toml [", ""), ServerFacts::default());
    }

    #[test]
    fn scenarios_keep_their_order_kind_needs_and_placement_group() {
        let suite = Suite::parse(
            "t",
            "servers = [\"*\"]\n\
             [[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [10, 100]\n\
             [[scenarios]]\nname = \"blank-veth\"\nendpoint = \"blank\"\nconnections = [10, 100]\n\
             placement = \"netns\"\nbandwidth = \"1gbit\"\n\
             [[scenarios]]\nname = \"short\"\nendpoint = \"blank\"\nconnections = [10]\n\
             kind = \"short-lived\"\nrequests_per_connection = 10\n\
             [[scenarios]]\nname = \"db\"\nendpoint = \"db\"\nconnections = [10]\n",
        )
        .unwrap();
        let r = scenario_records(&suite);
        let names: Vec<&str> = r.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["blank", "blank-veth", "short", "db"]);
        assert_eq!(
            r.iter().map(|s| s.position).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        assert_eq!(r[1].same_cells_as, "blank");
        assert_eq!(r[1].placement, netbench_records::NetPlacement::Netns);
        assert_eq!(r[1].bandwidth.map(|b| b.bits_per_s), Some(1_000_000_000));
        assert_eq!(r[2].same_cells_as, "short");
        assert_eq!(
            (r[2].kind.as_str(), r[2].requests_per_connection),
            ("short-lived", Some(10))
        );
        assert_eq!(r[3].needs, Some(Offer::Db));
        assert_eq!(r[0].connections, [10, 100]);
        assert!(scenario_records_of_text("t", "not a suite [").is_empty());
    }
}
