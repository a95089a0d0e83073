//! The reports end to end: two real runs of a small matrix (a good server
//! with two variants, one of another threading model, and one that crashes
//! mid-measurement) go into a store; the HTML report and the comparison are
//! rebuilt from that store alone and opened in headless Chromium, which must
//! show no console error and no network request, with every chart drawn from
//! data and coloured by threading model; the screenshots are kept under the
//! test's output folder. The Markdown, CSV and JSON forms are checked against
//! the same store.

mod common;

use std::path::{Path, PathBuf};

use common::{check_in_browser, fake_server, repo, request, scratch, Quiet};
use netbench_report::ranking::Standing;
use netbench_report::{
    build_report, compare, write_compare_html, write_csv, write_html, write_markdown,
};
use netbench_suite::run_suite;
use netbench_suite::store::{RunStatus, Store};

const SUITE: &str = r#"
    servers = ["*:*"]
    repetitions = 2
    cooldown = "0s"
    quiet_wait = "0s"
    [[scenarios]]
    name = "blank"
    endpoint = "blank"
    connections = [1, 8]
    warmup = "100ms"
    duration = "500ms"
    [[scenarios]]
    name = "work"
    endpoint = "work"
    connections = [1, 8]
    warmup = "100ms"
    duration = "500ms"
    work_documents = 50
"#;

fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The tests here measure real servers on a small machine: one at a time,
/// so one's load does not skew the other's figures.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn reports_render_in_chromium_with_every_chart_drawn() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = scratch("report");
    let servers = work.join("servers");
    let tag = format!("--tag report-{}", std::process::id());
    fake_server(&servers, "steady", "", &tag);
    // Passes verify, then exits 300 answers into each measurement: its cells
    // fail, and the report must say so rather than draw nothing.
    fake_server(&servers, "crashy", "", &format!("--crash-after 300 {tag}"));
    // steady is work-stealing with a website and two variants: one tuned,
    // one that runs another model. crashy stays an event loop.
    let manifest = servers.join("steady/server.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("model = \"event-loop\""), "{text}");
    std::fs::write(
        &manifest,
        text.replace("model = \"event-loop\"", "model = \"work-stealing\"")
            + "framework_version = \"1.2\"\nwebsite = \"https://example.org/steady\"\n\
               [[variants]]\nname = \"tuned\"\ntier = \"tuned\"\n\
               [[variants]]\nname = \"pool\"\nmodel = \"thread-pool\"\n",
    )
    .unwrap();
    let db = work.join("db.sqlite");
    let mut ids = Vec::new();
    for _ in 0..2 {
        let mut store = Store::open(&db).unwrap();
        let outcome = run_suite(
            &request(SUITE, servers.clone(), &work),
            &mut store,
            &mut Quiet {
                cancel_after: None,
                finished: 0,
            },
        )
        .unwrap();
        assert_eq!(outcome.status, RunStatus::Complete);
        ids.push(outcome.run);
    }

    // Everything from a fresh handle on the file: the store alone.
    let store = Store::open(&db).unwrap();
    let a = build_report(&store.run(ids[0]).unwrap());
    let b = build_report(&store.run(ids[1]).unwrap());
    let steady = a.cell("blank", 8, "steady").expect("steady's cell");
    assert_eq!(steady.stats.rps.unwrap().n, 2);
    let spectrum = steady.latency.as_ref().expect("a latency spectrum");
    assert!(spectrum.points.len() >= 5, "{spectrum:?}");
    assert!(spectrum.points.windows(2).all(|w| w[0].ns <= w[1].ns));
    assert!(steady.server_cpu_cores.is_some_and(|c| c > 0.0));
    assert!(steady.peak_rss_bytes.is_some_and(|m| m > 0.0));
    let crashy = a.cell("blank", 8, "crashy").expect("crashy's cell");
    assert!(
        crashy.stats.rps.is_none() && crashy.flags.contains('F'),
        "{crashy:?}"
    );
    // By model (thread-pool, event-loop, work-stealing: the contract's
    // order), then name; the servers in the same order.
    let order = ["steady:pool", "crashy", "steady", "steady:tuned"];
    assert_eq!(a.columns, order);
    let labels: Vec<&str> = a.servers.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, order);
    let info = |label: &str| a.servers.iter().find(|s| s.label == label).unwrap();
    let json = serde_json::to_value(&a.servers).unwrap();
    let field = |i: usize, key: &str| json[i][key].as_str().unwrap_or("null").to_string();
    let models: Vec<String> = (0..4).map(|i| field(i, "model")).collect();
    assert_eq!(
        models,
        [
            "thread-pool",
            "event-loop",
            "work-stealing",
            "work-stealing"
        ]
    );
    let tiers: Vec<String> = (0..4).map(|i| field(i, "tier")).collect();
    assert_eq!(tiers, ["default", "default", "default", "tuned"]);
    assert_eq!(info("steady:pool").website, "https://example.org/steady");
    assert_eq!(info("steady:pool").framework_version, "1.2");
    assert_eq!(info("steady").framework, "test 1.2");
    // Peak memory: the largest sample of any of the server's cells, so the
    // largest of its repetitions' peaks and at least each cell's median;
    // crashy's failed cells kept no samples, so it has none.
    for label in ["steady:pool", "steady", "steady:tuned"] {
        let peak = info(label).peak_rss_bytes.expect("a peak") as f64;
        let cells: Vec<f64> = a
            .cells
            .iter()
            .filter(|c| c.server == label)
            .map(|c| c.peak_rss_bytes.expect("samples"))
            .collect();
        assert_eq!(cells.len(), 4);
        assert!(
            cells.iter().all(|&p| p <= peak),
            "{label}: {peak} {cells:?}"
        );
        let reps: Vec<u64> = a
            .repetitions
            .iter()
            .filter(|r| r.server == label)
            .filter_map(|r| r.result.as_ref()?.server.map(|u| u.peak_rss_bytes))
            .collect();
        assert_eq!(reps.iter().max().map(|&p| p as f64), Some(peak), "{label}");
    }
    assert_eq!(info("crashy").peak_rss_bytes, None);

    let dir = output_dir();
    let html = dir.join("report.html");
    write_html(&mut std::fs::File::create(&html).unwrap(), &a).unwrap();
    let found = check_in_browser(&html, &dir.join("report.png"));
    eprintln!(
        "report.html: {} charts, {} series checked against the model key {}",
        found["charts"].as_array().unwrap().len(),
        found["series"],
        found["models"]
    );
    let charts = found["charts"].as_array().unwrap();
    // Per test and connection count (issue 29): ranked throughput, p99,
    // CPU, requests per CPU-second and memory, and the latency spectrum.
    assert_eq!(charts.len(), 2 * 2 * 6, "{found}");
    // Every good repetition a dot over its bar in each ranked chart: three
    // working servers, two repetitions.
    let dots = found["dots"].as_array().unwrap();
    assert_eq!(dots.len(), 2 * 2 * 5, "{found}");
    for d in dots {
        assert_eq!(d["datasets"], 1, "{d}");
        assert_eq!(d["points"], 3 * 2, "{d}");
        assert_eq!(d["drawn"], 3 * 2, "{d}");
    }
    eprintln!(
        "report.html: repetition dots {}, standings {}",
        dots.iter()
            .map(|d| format!("{}={}", d["chart"].as_str().unwrap(), d["points"]))
            .collect::<Vec<_>>()
            .join(" "),
        found["standings"]
    );
    // The machine-speed control's paragraph is gone with the normalised
    // figures (issue 43: they narrowed nothing).
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("<h3>Machine-speed control</h3>"));
    assert!(page.contains("Only a leader is bold."));
    // No warm-up records: the start-up section says how the processes ran
    // and has no chart (counted above).
    assert!(
        page.contains("data-process=\"fixed\"")
            && page.contains("fixed warm-up, fresh process per cell")
    );
    // Every measured cell shows its tier beside its figure.
    let measured = a.cells.iter().filter(|c| c.stats.rps.is_some()).count();
    let tiered = a.cells.iter().filter(|c| c.stats.tier.is_some()).count();
    assert_eq!(
        page.matches("<abbr class=\"tier\"").count(),
        tiered,
        "{measured} measured"
    );
    assert!(!page.contains("The fastest in each row is bold"));
    // Each measured cell's standing shown, as the data has it (the checker
    // compared them and the bold): 3 working servers × 4 rows.
    let standings = &found["standings"];
    let shown: u64 = ["leader", "tied", "behind"]
        .iter()
        .map(|k| standings[k].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(shown, 3 * 4, "{found}");
    for (test, conns) in [("blank", 1), ("blank", 8), ("work", 1), ("work", 8)] {
        let row: Vec<_> = a
            .columns
            .iter()
            .filter_map(|s| a.cell(test, conns, s))
            .filter(|c| c.stats.rps.is_some())
            .map(|c| c.stats.standing)
            .collect();
        let leaders = row.iter().filter(|s| **s == Standing::Leader).count();
        let tied = row.iter().filter(|s| **s == Standing::Tied).count();
        assert!(
            (leaders == 1 && tied == 0) || (leaders == 0 && tied >= 2),
            "{test} c={conns}: {row:?}"
        );
    }
    // The key: each model with its colour and its servers, in column order
    // (crashy has no result but is a column all the same); the checker
    // found every series in its model's hue, in order.
    let key: Vec<(&str, Vec<&str>)> = found["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let servers = m["servers"].as_array().unwrap();
            (
                m["model"].as_str().unwrap(),
                servers.iter().map(|s| s.as_str().unwrap()).collect(),
            )
        })
        .collect();
    assert_eq!(
        key,
        [
            ("thread-pool", vec!["steady:pool"]),
            ("event-loop", vec!["crashy"]),
            ("work-stealing", vec!["steady", "steady:tuned"]),
        ],
        "{found}"
    );
    // Three working servers in each chart (crashy has no data); the dots
    // are not a series.
    assert_eq!(found["series"], 3 * charts.len(), "{found}");
    for id in ["throughput-", "p99-", "cpu-", "efficiency-", "memory-"] {
        assert!(
            charts
                .iter()
                .any(|c| c["kind"] == "ranked" && c["id"].as_str().unwrap().starts_with(id)),
            "no {id} chart: {found}"
        );
    }
    assert!(charts.iter().any(|c| c["kind"] == "latency"), "{found}");
    assert!(std::fs::metadata(dir.join("report.png")).unwrap().len() > 10_000);

    // Servers with one good and one failed connection count: the charts
    // must draw the gap without a console error.
    let mut partial = a.clone();
    for c in partial
        .cells
        .iter_mut()
        .filter(|c| c.server.starts_with("steady") && c.connections == 8)
    {
        c.stats.rps = None;
        c.stats.failed = c.stats.repetitions;
        c.flags = "F".into();
        c.latency = None;
        c.server_cpu_cores = None;
        c.requests_per_cpu_s = None;
        c.peak_rss_bytes = None;
        c.rss_per_connection = None;
    }
    let html = dir.join("partial.html");
    write_html(&mut std::fs::File::create(&html).unwrap(), &partial).unwrap();
    let found = check_in_browser(&html, &dir.join("partial.png"));
    // The charts at 8 connections have nothing left to draw.
    assert_eq!(found["charts"].as_array().unwrap().len(), 2 * 6, "{found}");
    for d in found["dots"].as_array().unwrap() {
        assert_eq!(d["points"], 3 * 2, "{d}");
    }

    let comparison = compare(&a, &b);
    assert!(!comparison.rows.is_empty());
    // Same machine, same suite: nothing to point out, though each run drew
    // its own work seed.
    assert_ne!(a.run.work_seed, b.run.work_seed);
    assert_eq!(comparison.environment_differences, []);
    // The page is checked with a difference to show: B "moved" to another CPU.
    let mut moved = b.clone();
    moved.run.environment["cpu_model"] = "Another CPU".into();
    let comparison = compare(&a, &moved);
    assert_eq!(comparison.environment_differences.len(), 1);
    let html = dir.join("compare.html");
    write_compare_html(&mut std::fs::File::create(&html).unwrap(), &comparison).unwrap();
    let found = check_in_browser(&html, &dir.join("compare.png"));
    assert_eq!(found["charts"].as_array().unwrap().len(), 2, "{found}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("Not the same in both runs") && page.contains("Another CPU"),
        "the environment difference is not on the page"
    );

    let mut md = Vec::new();
    write_markdown(&mut md, &a).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(
        md.contains("| test | connections | steady:pool | crashy | steady | steady:tuned |"),
        "{md}"
    );
    assert!(
        md.contains("| framework | framework version | model | tier |")
            && md.contains("| peak memory | verify |"),
        "{md}"
    );
    assert!(
        md.contains("| [steady:tuned](https://example.org/steady) | Rust")
            && md.contains("| test | 1.2 | work-stealing | tuned | runtime's | (shared) |"),
        "{md}"
    );
    assert!(md.contains("failed 2/2 F"), "{md}");

    let mut csv = Vec::new();
    write_csv(&mut csv, &a).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    // crashy: 8 failed repetitions, one row each; steady and its two
    // variants: 8 good ones each, with the same metrics each.
    assert_eq!(
        rows.iter()
            .filter(|r| r.ends_with(",failed,bool,1"))
            .count(),
        8
    );
    let rps_rows = rows
        .iter()
        .filter(|r| r.contains(",requests_per_s,"))
        .count();
    assert_eq!(rps_rows, 3 * 8);
    assert!(rows.iter().all(|r| r.split(',').count() == 10), "{csv}");

    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["format"], "netbench-report/2");
    assert_eq!(json["repetitions"].as_array().unwrap().len(), 4 * 8);
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schema/report.v2.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema itself is valid");
    for report in [&a, &b, &partial] {
        let json = serde_json::to_value(report).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    // A report from before models, tiers, websites, framework versions and
    // peak memory is still valid; an unknown model is not.
    let mut old = serde_json::to_value(&a).unwrap();
    for server in old["servers"].as_array_mut().unwrap() {
        let server = server.as_object_mut().unwrap();
        for key in [
            "framework_name",
            "framework_version",
            "model",
            "tier",
            "website",
            "peak_rss_bytes",
        ] {
            assert!(server.remove(key).is_some(), "{key}");
        }
    }
    assert!(validator.is_valid(&old));
    let mut unknown = serde_json::to_value(&a).unwrap();
    unknown["servers"][0]["model"] = serde_json::Value::Null;
    assert!(validator.is_valid(&unknown));
    unknown["servers"][0]["model"] = "event-loopz".into();
    assert!(!validator.is_valid(&unknown));
    // And it refuses what it must: an unknown flag, a missing key.
    let mut bad = serde_json::to_value(&a).unwrap();
    bad["cells"][0]["flags"] = "X".into();
    assert!(!validator.is_valid(&bad));
    bad["cells"][0].as_object_mut().unwrap().remove("flags");
    assert!(!validator.is_valid(&bad));

    let failures = std::fs::read_to_string(dir.join("report.html")).unwrap();
    // Grouped by server and the reason's first line: one entry per distinct
    // headline, together covering all 8 failed repetitions.
    let mut headlines: Vec<&str> = a
        .repetitions
        .iter()
        .filter_map(|r| r.failure.as_deref())
        .map(|f| f.lines().next().unwrap_or(""))
        .collect();
    headlines.sort();
    headlines.dedup();
    let entries: Vec<usize> = failures
        .split("<li><b>crashy</b>, ")
        .skip(1)
        .map(|rest| {
            let n = rest.split(' ').next().unwrap();
            n.parse().unwrap_or_else(|_| panic!("{rest}"))
        })
        .collect();
    assert_eq!(entries.len(), headlines.len(), "{entries:?} {headlines:#?}");
    assert_eq!(
        entries.iter().sum::<usize>(),
        8,
        "{entries:?} {headlines:#?}"
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// One cell of every scenario kind on two servers, one repetition: short
/// (about ten seconds), and enough to open every kind's chart in Chromium.
/// The throughput cells warm until steady on one process per server (issue
/// 28), for the start-up section and its chart.
const KINDS_SUITE: &str = r#"
    servers = ["*"]
    repetitions = 1
    cooldown = "0s"
    quiet_wait = "0s"
    [warmup]
    until = "steady"
    window = "100ms"
    min = "300ms"
    cap = "1s"
    # The first 1 s figure needs a curve that covers it: a curve that settles
    # at its minimum covered 0.66 s once under load, and the test failed.
    startup = "1200ms"
    process = "round"
    [[scenarios]]
    name = "blank"
    endpoint = "blank"
    connections = [4]
    warmup = "100ms"
    duration = "300ms"
    [[scenarios]]
    name = "k1"
    kind = "short-lived"
    requests_per_connection = 1
    endpoint = "blank"
    connections = [4]
    warmup = "100ms"
    duration = "300ms"
    [[scenarios]]
    name = "held"
    kind = "idle"
    endpoint = "blank"
    connections = [2, 16]
    hold = "500ms"
    [[scenarios]]
    name = "burst"
    kind = "storm"
    endpoint = "blank"
    connections = [32]
    [[scenarios]]
    name = "sweep"
    kind = "rate-sweep"
    endpoint = "blank"
    connections = [4]
    warmup = "100ms"
    duration = "300ms"
    steps = [0.25, 0.5]
    # Generous, so that the knee is there to compare unless a step fell
    # behind its rate.
    slo_p99 = "1s"
    [[scenarios]]
    name = "fixed"
    kind = "fixed-rate"
    rate = 200
    endpoint = "blank"
    connections = [4]
    warmup = "100ms"
    duration = "300ms"
    [[scenarios]]
    name = "piped"
    kind = "pipelined"
    pipeline = 4
    endpoint = "blank"
    connections = [4]
    warmup = "100ms"
    duration = "300ms"
"#;

#[test]
fn every_kind_has_its_section_and_charts_in_chromium() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = scratch("report-kinds");
    let servers = work.join("servers");
    let tag = format!("--tag kinds-{}", std::process::id());
    fake_server(&servers, "calm", "", &tag);
    fake_server(&servers, "steady", "", &tag);
    let db = work.join("db.sqlite");
    let mut store = Store::open(&db).unwrap();
    let outcome = run_suite(
        &request(KINDS_SUITE, servers.clone(), &work),
        &mut store,
        &mut Quiet {
            cancel_after: None,
            finished: 0,
        },
    )
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    let store = Store::open(&db).unwrap();
    let r = build_report(&store.run(outcome.run).unwrap());

    // The throughput table: keep-alive, short-lived (K) and pipelined (P)
    // only; every other kind in its own rows, none of them failed.
    let tests: Vec<&str> = r.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tests, ["blank", "k1", "piped"]);
    assert!(
        r.cells.iter().all(|c| c.stats.rps.is_some()),
        "{:?}",
        r.cells
    );
    assert!(r.cell("piped", 4, "steady").unwrap().flags.contains('P'));
    assert!(r.cell("k1", 4, "steady").unwrap().flags.contains('K'));
    let k = &r.kinds;
    assert_eq!(k.failures(), []);
    assert_eq!(k.idle.len(), 2, "{k:?}");
    for idle in &k.idle {
        let open: Vec<f64> = idle.levels.iter().map(|l| l.open).collect();
        assert_eq!(open, [2.0, 16.0], "{idle:?}");
        assert!(idle.levels.iter().all(|l| l.pss_bytes > 0.0), "{idle:?}");
    }
    assert_eq!(k.storm.len(), 2);
    assert!(k.storm.iter().all(|s| s.answered == Some(32.0)), "{k:?}");
    assert_eq!(k.rate_sweep.len(), 2);
    assert!(k.rate_sweep.iter().all(|s| s.steps.len() == 2), "{k:?}");
    assert_eq!(k.fixed_rate.len(), 2);
    let cpu: Vec<f64> = k
        .fixed_rate
        .iter()
        .map(|f| f.server_cpu_us_per_request.unwrap_or(f64::INFINITY))
        .collect();
    assert!(cpu[0] <= cpu[1], "ranked lowest first: {cpu:?}");
    assert_eq!(k.short_lived.len(), 1);
    assert_eq!(k.short_lived[0].columns.len(), 2, "keep-alive and K = 1");
    // Issue 28: the warm-up records give the start-up section: one process
    // per server and round, each server's fresh cell drawn.
    let startup = &r.startup;
    assert_eq!(
        startup.process,
        netbench_report::ProcessMode::Reused,
        "{startup:?}"
    );
    for server in ["calm", "steady"] {
        let s = startup
            .servers
            .iter()
            .find(|s| s.server == server)
            .unwrap_or_else(|| panic!("{server}: {startup:?}"));
        assert_eq!(s.fresh_cells, 1, "{s:?}");
        assert!(s.ready_s.is_some() && s.first_1s_rps.is_some(), "{s:?}");
        assert!(
            startup.curves.iter().any(|c| c.server == server),
            "{startup:?}"
        );
    }

    let dir = output_dir();
    let html = dir.join("kinds.html");
    write_html(&mut std::fs::File::create(&html).unwrap(), &r).unwrap();
    let found = check_in_browser(&html, &dir.join("kinds.png"));
    let charts = found["charts"].as_array().unwrap();
    for kind in ["idle-pss", "sweep"] {
        let drawn = charts.iter().filter(|c| c["kind"] == kind).count();
        assert_eq!(drawn, 1, "{kind}: {found}");
    }
    // The figures at one level, ranked like throughput (issue 29): a chart
    // per test and level, named by its measure.
    for measure in [
        "idle-memory-",
        "idle-cpu-",
        "storm-time-",
        "storm-connect-",
        "fixed-cpu-",
        "short-lived-",
    ] {
        let drawn = charts
            .iter()
            .filter(|c| c["kind"] == "ranked" && c["id"].as_str().unwrap().starts_with(measure))
            .count();
        assert!(drawn >= 1, "{measure}: {found}");
    }
    // The start-up chart of each test a fresh cell drew, with a line per
    // server (the checker found each in its server's colour).
    let startup_charts: Vec<_> = charts.iter().filter(|c| c["kind"] == "startup").collect();
    assert_eq!(
        startup_charts.len(),
        r.startup.chart_tests().len(),
        "{found}"
    );
    assert!(!startup_charts.is_empty(), "{found}");
    let lines: u64 = startup_charts
        .iter()
        .map(|c| c["datasets"].as_u64().unwrap())
        .sum();
    assert_eq!(lines, 2, "{found}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"startup\">") && page.contains("data-process=\"reused\""));
    eprintln!(
        "kinds.html: {} charts, {} series checked against the model key",
        charts.len(),
        found["series"]
    );

    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schema/report.v2.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema itself is valid");
    let json = serde_json::to_value(&r).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");

    // The run against itself: each kind compared by its own figures.
    let comparison = compare(&r, &r);
    let html = dir.join("kinds-compare.html");
    write_compare_html(&mut std::fs::File::create(&html).unwrap(), &comparison).unwrap();
    check_in_browser(&html, &dir.join("kinds-compare.png"));
    let metrics: std::collections::BTreeSet<String> = comparison
        .rows
        .iter()
        .map(|row| row.metric.key().to_string())
        .collect();
    for m in ["requests_per_s", "storm_all_done", "idle_cpu_cores"] {
        assert!(metrics.contains(m), "{m}: {metrics:?}");
    }
    // A cell is in neither run only for a reason the report shows: a rate
    // sweep none of whose steps kept up within the SLO has no knee to
    // compare (a busy machine can stall a 300 ms step by the 1% that
    // counts; CI did once).
    let kneeless: Vec<String> = k
        .rate_sweep
        .iter()
        .filter(|s| s.knee_per_s.is_none())
        .map(|s| format!("{} c={} {}", s.test, s.connections, s.server))
        .collect();
    assert!(
        comparison.in_neither.iter().all(|c| kneeless.contains(c)),
        "{:?} (sweeps without a knee: {kneeless:?})",
        comparison.in_neither
    );

    let mut md = Vec::new();
    write_markdown(&mut md, &r).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("#### Idle connections") && md.contains("#### Connection storm"));
    assert!(
        md.contains("#### Start-up") && md.contains("| server | first answer | first 1 s |"),
        "{md}"
    );
    let mut csv = Vec::new();
    write_csv(&mut csv, &r).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert!(csv.contains(",storm_all_done,s,") && csv.contains(",idle_pss_16,bytes,"));
    assert!(!csv.contains(",failed,bool,1"), "{csv}");
    let _ = std::fs::remove_dir_all(&work);
}
