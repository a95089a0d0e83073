//! The allocator axis end to end: a server that says `allocator = "glibc"`
//! gets a generated variant per replacement allocator, the runner preloads
//! it, checks that every process of the server has it mapped, records it, and
//! leaves out a variant whose preload did not take (here a launcher that
//! clears LD_PRELOAD) instead of recording it under the wrong name. The
//! report then shows the study. Needs Debian's libjemalloc2 (installed by
//! `make test`).

mod common;

use common::{check_in_browser, fake_server_with, request, scratch, Quiet};

use netbench_report::{build_report, write_html, write_markdown};
use netbench_suite::store::{MeasurementStatus, RunStatus, Store};
use netbench_suite::{allocator, run_suite, Allocator};

fn native_server(servers: &std::path::Path, name: &str, launcher: &str, tag: &str) {
    fake_server_with(servers, name, "", "allocator = \"glibc\"\n", launcher, tag);
}

#[test]
fn allocator_variants_are_preloaded_checked_and_recorded() {
    assert!(
        allocator::library_path(Allocator::Jemalloc).is_ok(),
        "this test needs Debian's libjemalloc2 (make test installs it: apt-get install libjemalloc2)"
    );
    let work = scratch("allocators");
    let servers = work.join("servers");
    let tag = format!("--tag allocators-{}", std::process::id());
    native_server(&servers, "native", "", &tag);
    // env(1) is dynamically linked, so it loads the preload itself, then
    // starts the server without it: the group's server process runs on glibc.
    native_server(&servers, "laundered", "env -u LD_PRELOAD ", &tag);
    let suite = r#"
        servers = ["*:glibc", "*:jemalloc"]
        cooldown = "50ms"
        quiet_wait = "0s"
        [[scenarios]]
        name = "blank"
        endpoint = "blank"
        connections = [1, 2, 4]
        duration = "1s"
    "#;
    let req = request(suite, servers, &work);
    let mut store = Store::open_in_memory().unwrap();
    let outcome = run_suite(
        &req,
        &mut store,
        &mut Quiet {
            cancel_after: None,
            finished: 0,
        },
    )
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    let run = store.run(outcome.run).unwrap();

    let find = |server: &str, variant: &str| {
        run.servers
            .iter()
            .find(|s| s.server == server && s.variant == variant)
            .unwrap_or_else(|| panic!("{server}:{variant} not recorded: {:?}", run.servers))
    };
    let native = find("native", "");
    assert_eq!(native.allocator.as_deref(), Some("glibc"));
    assert_eq!(native.excluded_reason, None);
    let native_je = find("native", "jemalloc");
    assert_eq!(native_je.allocator.as_deref(), Some("jemalloc"));
    assert_eq!(native_je.excluded_reason, None);
    let laundered = find("laundered", "");
    assert_eq!(laundered.excluded_reason, None, "glibc is what it runs");
    let why = find("laundered", "jemalloc").excluded_reason.clone();
    assert!(
        why.as_deref()
            .is_some_and(|w| w.contains("allocator check") && w.contains("expected jemalloc")),
        "{why:?}"
    );
    // No other allocator was selected, so none was made.
    assert!(run.servers.iter().all(|s| s.variant != "mimalloc"));

    let measured: Vec<(&str, &str)> = run
        .measurements
        .iter()
        .map(|m| {
            assert_eq!(m.status, MeasurementStatus::Ok, "{:?}", m.failure);
            (m.key.server.as_str(), m.key.variant.as_str())
        })
        .collect();
    assert!(measured.contains(&("native", "jemalloc")), "{measured:?}");
    assert!(
        !measured.contains(&("laundered", "jemalloc")),
        "{measured:?}"
    );

    // The report lays the two allocators of `native` side by side.
    let report = build_report(&run);
    let mut md = Vec::new();
    write_markdown(&mut md, &report).unwrap();
    let md = String::from_utf8(md).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| blank | 2 | native |"))
        .unwrap_or_else(|| panic!("no allocator row for native:\n{md}"));
    assert!(row.contains("req/s") && row.contains('%'), "{row}");
    assert!(
        !md.lines()
            .any(|l| l.starts_with("| blank | 2 | laundered |")),
        "laundered ran with one allocator only:\n{md}"
    );

    // The HTML report draws the study (bars per server, a colour per
    // allocator) and, with three connection counts, the curves against
    // connections; the checker fails on a console error or an empty chart.
    let html = work.join("report.html");
    write_html(&mut std::fs::File::create(&html).unwrap(), &report).unwrap();
    let found = check_in_browser(&html, &work.join("report.png"));
    let kinds: Vec<&str> = found["charts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["kind"].as_str())
        .collect();
    // One study chart of requests/s and one of memory per connection count.
    assert_eq!(
        kinds.iter().filter(|k| **k == "allocators").count(),
        2 * 3,
        "{found}"
    );
    for kind in ["curve-rps", "curve-threads", "curve-rss"] {
        assert!(kinds.contains(&kind), "no {kind} chart: {found}");
    }
    let _ = std::fs::remove_dir_all(&work);
}
