//! `netbench site` as a user runs it (issue 29): a store of several runs
//! (three of one suite whose kernel, then commit, change on the way, and
//! one of another suite with one repetition), made through the store's own
//! API with figures chosen here; the site written from it, every page there
//! and every link between them resolving; the folder rules and the exit
//! codes; and the index and a server's page opened in headless Chromium by
//! the report's checker, which must find the timelines drawn with data and
//! the changes marked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use netbench_records::facts::{Facts, IdleFacts, IdleLevelFacts, LineFit};
use netbench_records::fixtures;
use netbench_suite::records_of::{scenario_records_of_text, server_facts};
use netbench_suite::store::{CellKey, Measurement, NewRun, RunStatus, ServerRecord, Store};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netbench-site-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn netbench(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netbench"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

const SUITE: &str = "servers = [\"*\"]\nrepetitions = 3\n\
    [[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [1, 100]\n\
    [[scenarios]]\nname = \"work\"\nendpoint = \"work\"\nconnections = [100]\n";

fn manifest(name: &str, model: &str, variants: &str) -> String {
    format!(
        "name = \"{name}\"\nlanguage = \"Rust\"\nframework = \"test\"\ndescription = \"{name} \
         for the site\"\nmodel = \"{model}\"\nwebsite = \"https://example.org/{name}\"\n\
         run = \"x\"\n{variants}"
    )
}

/// An idle scenario, for the runs that hold idle connections too.
const IDLE: &str = "[[scenarios]]\nname = \"held\"\nkind = \"idle\"\nendpoint = \"blank\"\n\
    connections = [10, 100]\nhold = \"1s\"\n";

/// The idle facts of a server whose PSS grows by `slope` bytes a connection.
fn idle_facts(slope: f64) -> Facts {
    let level = |connections: u32| IdleLevelFacts {
        rss_bytes: 2_000_000,
        ..fixtures::idle_level(
            connections,
            1_000_000 + (f64::from(connections) * slope) as u64,
        )
    };
    Facts::Idle(IdleFacts {
        hold_s: 1.0,
        heartbeat_s: None,
        levels: vec![level(10), level(100)],
        pss_fit: Some(LineFit {
            slope,
            intercept: 1_000_000.0,
            r2: 1.0,
            points: 2,
        }),
    })
}

/// One stored run: `servers` as (name, variant, manifest, speed), each
/// measured in every cell at `speed` × the cell's base figure, repetitions
/// a little apart; with `idle`, each also holds idle connections, its
/// memory per connection 2 KiB ÷ `speed`.
fn stored_run(
    store: &Store,
    suite: &str,
    repetitions: u32,
    env: serde_json::Value,
    servers: &[(&str, &str, &str, f64)],
    idle: bool,
) -> i64 {
    let suite_toml = SUITE.replace("repetitions = 3", &format!("repetitions = {repetitions}"));
    let suite_toml = if idle {
        format!("{suite_toml}{IDLE}")
    } else {
        suite_toml
    };
    let id = store
        .begin_run(&NewRun {
            environment: env,
            placement: serde_json::json!({"server": [0], "client": [1]}),
            scenarios: scenario_records_of_text(suite, &suite_toml),
            suite_toml,
            ..fixtures::new_run(suite)
        })
        .unwrap();
    for &(name, variant, manifest, speed) in servers {
        store
            .record_server(
                id,
                &ServerRecord {
                    manifest_toml: manifest.into(),
                    build_s: 2.5,
                    artefact_bytes: Some(3_000_000),
                    ready_s: Some(0.05),
                    facts: server_facts(manifest, variant),
                    ..fixtures::server(name, variant)
                },
            )
            .unwrap();
        let key = |scenario: &str, connections: u32, repetition: u32| CellKey {
            variant: variant.into(),
            ..fixtures::key(name, scenario, connections, repetition)
        };
        if idle {
            let m = Measurement {
                facts: Some(idle_facts(2048.0 / speed)),
                ..fixtures::ok(key("held", 100, 1), 0.0)
            };
            store.record_measurement(id, &m).unwrap();
        }
        for (scenario, conns, base) in [
            ("blank", 1, 20_000.0),
            ("blank", 100, 90_000.0),
            ("work", 100, 30_000.0),
        ] {
            for repetition in 1..=repetitions {
                let jitter = 1.0 + 0.01 * f64::from(repetition) - 0.02;
                let rps = base * speed * jitter;
                let m = Measurement {
                    result_json: Some(fixtures::load_result(rps, 3e6, 2.0)),
                    ..fixtures::ok(key(scenario, conns, repetition), rps)
                };
                store.record_measurement(id, &m).unwrap();
            }
        }
    }
    store.set_run_status(id, RunStatus::Complete).unwrap();
    id
}

/// Four runs: aa three times (the kernel changes before the second, the
/// commit before the third, which holds idle connections too; gamma joins
/// in the second), quick once.
fn store_of_runs(db: &Path) {
    let store = Store::open(db).unwrap();
    let alpha = manifest(
        "alpha",
        "work-stealing",
        "[[variants]]\nname = \"tuned\"\ntier = \"tuned\"\n",
    );
    let beta = manifest("beta", "event-loop", "");
    let gamma = manifest("gamma", "thread-pool", "");
    let env = |kernel: &str, commit: &str| {
        serde_json::json!({"hostname": "vm", "kernel": kernel, "cpu_model": "Test CPU",
                           "project_commit": commit, "project_dirty": false})
    };
    let first: Vec<(&str, &str, &str, f64)> = vec![
        ("alpha", "", alpha.as_str(), 1.0),
        ("alpha", "tuned", alpha.as_str(), 1.1),
        ("beta", "", beta.as_str(), 0.8),
    ];
    stored_run(
        &store,
        "aa",
        3,
        env("6.1.0", "1111111111111111"),
        &first,
        false,
    );
    let mut more = first.clone();
    more.push(("gamma", "", gamma.as_str(), 0.5));
    stored_run(
        &store,
        "aa",
        3,
        env("6.18.4", "1111111111111111"),
        &more,
        false,
    );
    more[2].3 = 0.9;
    stored_run(
        &store,
        "aa",
        3,
        env("6.18.4", "2222222222222222"),
        &more,
        true,
    );
    stored_run(
        &store,
        "quick",
        1,
        env("6.18.4", "2222222222222222"),
        &more,
        false,
    );
}

/// Every `href` of an HTML page.
fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_site_holds_every_run_and_its_links_resolve() {
    let dir = scratch("links");
    store_of_runs(&dir.join("db.sqlite"));
    let out = netbench(&dir, &["site", "--db", "db.sqlite", "-o", "site"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("wrote 8 pages (4 runs, 3 servers) to site"),
        "{stderr}"
    );
    let site = dir.join("site");
    let pages = [
        "index.html",
        "runs/1.html",
        "runs/2.html",
        "runs/3.html",
        "runs/4.html",
        "servers/alpha.html",
        "servers/beta.html",
        "servers/gamma.html",
    ];
    for p in pages {
        assert!(site.join(p).is_file(), "{p} is missing");
        assert!(!site.join(format!("{p}.partial")).exists());
    }
    assert!(site.join("netbench-site.json").is_file());

    // Every link between pages resolves; the ones out are the websites.
    let mut checked = 0;
    for p in pages {
        let html = std::fs::read_to_string(site.join(p)).unwrap();
        let from = site.join(p).parent().unwrap().to_path_buf();
        for link in links(&html) {
            if link.starts_with("https://") || link.starts_with('#') {
                continue;
            }
            let file = link.split('#').next().unwrap();
            assert!(
                from.join(file).is_file(),
                "{p} links to {link}, which is not there"
            );
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked} links");

    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    // The latest run of each suite, marked in the list of runs.
    assert!(
        index.contains("<tr data-run=\"3\" class=\"latest\">"),
        "{index}"
    );
    assert!(index.contains("<tr data-run=\"4\" class=\"latest\">"));
    assert!(index.contains("<tr data-run=\"2\"><th>#2</th>"));
    assert!(index.contains("kernel 6.1.0 → 6.18.4"));
    assert!(index.contains("commit 111111111111 → 222222222222"));
    // aa's scores, each with its interval; quick's one repetition gives none.
    assert_eq!(index.matches("<tr data-score-server=").count(), 4);
    assert!(index.contains("No composite score"));
    let alpha_tuned = index
        .split("<tr data-score-server=\"alpha:tuned\">")
        .nth(1)
        .unwrap();
    assert!(alpha_tuned.starts_with("<td>1</td>"), "{alpha_tuned}");
    assert!(
        alpha_tuned.contains("<td class=\"num\">1.00 (1.00–1.00)</td><td>3 of 3</td>"),
        "{alpha_tuned}"
    );

    let alpha = std::fs::read_to_string(site.join("servers/alpha.html")).unwrap();
    for fact in [
        "<code>servers/alpha/</code>",
        "href=\"https://example.org/alpha\"",
        "work-stealing",
        "alpha:tuned",
        "data-chart=\"timeline\"",
        "before run <a href=\"../runs/2.html\">#2</a>: kernel 6.1.0 → 6.18.4",
    ] {
        assert!(alpha.contains(fact), "no {fact} on alpha's page");
    }
    // A score chart and three throughput timelines for aa; quick's one run
    // has throughput only.
    assert_eq!(alpha.matches("data-chart=\"timeline\"").count(), 1 + 3 + 3);
    // The idle figures of run 3, on the server's own page: a table of the
    // kind with the run and its date, a row per label.
    let kinds = alpha
        .split("<section id=\"kinds\">")
        .nth(1)
        .expect("a kinds section on alpha's page");
    let idle = kinds
        .split("<table class=\"grid kind\" data-kind=\"Idle connections\">")
        .nth(1)
        .expect("an idle table on alpha's page");
    let idle = idle.split("</table>").next().unwrap();
    assert!(
        idle.contains("<tr><td><a href=\"../runs/3.html\">#3</a></td><td>2026-")
            && idle.contains("<td>alpha</td><td>2.0 KiB/conn (r² 1.00, 2 levels)</td>")
            && idle.contains("<td>alpha:tuned</td><td>1.8 KiB/conn (r² 1.00, 2 levels)</td>"),
        "{idle}"
    );
    assert!(!idle.contains("beta"), "{idle}");
    // Every page but the index leads back to it.
    for p in &pages[1..] {
        let html = std::fs::read_to_string(site.join(p)).unwrap();
        assert!(
            html.contains("<a href=\"../index.html\">← all results</a>"),
            "{p} has no link back to the index"
        );
    }
    let first_write: Vec<String> = pages
        .iter()
        .map(|p| std::fs::read_to_string(site.join(p)).unwrap())
        .collect();

    // Written again into its own folder: fine; a page no longer part of
    // the site (listed by the earlier write) is removed.
    let marker = site.join("netbench-site.json");
    let listed = std::fs::read_to_string(&marker)
        .unwrap()
        .replace("\"index.html\",", "\"index.html\",\"servers/gone.html\",");
    std::fs::write(&marker, listed).unwrap();
    std::fs::write(site.join("servers/gone.html"), "old").unwrap();
    let out = netbench(&dir, &["site", "--db", "db.sqlite", "-o", "site"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("removed 1 page no longer part of it"),
        "{stderr}"
    );
    assert!(!site.join("servers/gone.html").exists());
    for (p, before) in pages.iter().zip(&first_write) {
        let again = std::fs::read_to_string(site.join(p)).unwrap();
        assert!(again == *before, "{p}: the same store gives the same page");
    }
}

#[test]
fn a_folder_of_other_files_needs_force_and_a_store_needs_runs() {
    let dir = scratch("rules");
    store_of_runs(&dir.join("db.sqlite"));
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/notes.txt"), "keep me").unwrap();
    let out = netbench(&dir, &["site", "--db", "db.sqlite", "-o", "mine"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("holds no netbench site") && stderr.contains("--force"),
        "{stderr}"
    );
    assert!(!dir.join("mine/index.html").exists());
    let out = netbench(
        &dir,
        &["site", "--db", "db.sqlite", "-o", "mine", "--force"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(dir.join("mine/index.html").is_file());
    assert_eq!(
        std::fs::read_to_string(dir.join("mine/notes.txt")).unwrap(),
        "keep me"
    );

    std::fs::write(dir.join("a-file"), "").unwrap();
    let out = netbench(&dir, &["site", "--db", "db.sqlite", "-o", "a-file"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a file, not a folder"));

    drop(Store::open(&dir.join("empty.sqlite")).unwrap());
    let out = netbench(&dir, &["site", "--db", "empty.sqlite", "-o", "new"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no runs in empty.sqlite"));
    let out = netbench(&dir, &["site", "--db", "nowhere.sqlite", "-o", "new"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.join("nowhere.sqlite").exists());
    // -o is required.
    let out = netbench(&dir, &["site", "--db", "db.sqlite"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The report's page checker (crates/testkit/browser/check.mjs): its JSON
/// line, or a failure with what it printed.
fn check_in_browser(html: &Path, png: &Path) -> serde_json::Value {
    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testkit/browser");
    assert!(
        browser.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed in {}: run `make test` (it runs `npm ci` there and \
         installs Debian's chromium)",
        browser.display()
    );
    let out = Command::new("node")
        .arg(browser.join("check.mjs"))
        .arg(html)
        .arg(png)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the page check failed on {}:\n{stdout}\n{}",
        html.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_site_renders_in_chromium_with_a_timeline() {
    let dir = scratch("browser");
    store_of_runs(&dir.join("db.sqlite"));
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site-browser");
    std::fs::create_dir_all(&shots).unwrap();
    let out = netbench(&dir, &["site", "--db", "db.sqlite", "-o", "site"]);
    assert_eq!(out.status.code(), Some(0));

    let found = check_in_browser(&dir.join("site/index.html"), &shots.join("index.png"));
    let charts = found["charts"].as_array().unwrap();
    // One score chart, of aa's latest run: a bar per scored server.
    assert_eq!(charts.len(), 1, "{found}");
    assert_eq!(charts[0]["kind"], "score");
    assert_eq!(charts[0]["points"], 4, "{found}");

    let found = check_in_browser(
        &dir.join("site/servers/alpha.html"),
        &shots.join("alpha.png"),
    );
    let charts = found["charts"].as_array().unwrap();
    assert_eq!(charts.len(), 7, "{found}");
    // aa's timelines: two labels over three runs (the score's too), and
    // both changes marked; quick's: one run, nothing to mark.
    let aa: Vec<&serde_json::Value> = charts.iter().take(4).collect();
    for c in &aa {
        assert_eq!(c["kind"], "timeline");
        assert_eq!(c["datasets"], 2, "{c}");
        assert_eq!(c["points"], 2 * 3, "{c}");
        assert_eq!(c["marks"], 2, "{c}");
        assert!(c["painted"].as_u64().unwrap() > 1000, "{c}");
    }
    for c in &charts[4..] {
        assert_eq!(
            (c["points"].as_u64(), c["marks"].as_u64()),
            (Some(2), Some(0)),
            "{c}"
        );
    }
    // gamma joined in the second run: a gap first, then two points.
    let found = check_in_browser(
        &dir.join("site/servers/gamma.html"),
        &shots.join("gamma.png"),
    );
    let first = &found["charts"][0];
    assert_eq!(
        (first["points"].as_u64(), first["marks"].as_u64()),
        (Some(2), Some(2)),
        "{found}"
    );
    assert!(std::fs::metadata(shots.join("alpha.png")).unwrap().len() > 10_000);
    eprintln!("screenshots in {}", shots.display());
}
