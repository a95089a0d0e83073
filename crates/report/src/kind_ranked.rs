//! The scenario kinds' ranked charts (issue 29): their figures taken out of
//! the kinds' rows as one bar per server at one test and level, then
//! ordered, shared out and drawn by ranked_view's one ranking, so an idle,
//! storm, fixed-rate or short-lived chart of 30 servers reads like the
//! throughput ones (a name and a figure per line) instead of as groups of
//! 30 bars told apart by colour.

use crate::flag::Flag;
use crate::kind_short::ShortGroup;
use crate::kinds::KindSections;
use crate::palette::Swatch;
use crate::ranked_view::{kind_bar, rank, Measure, RankedChart};

/// Idle CPU (mean cores over the hold) at one level held.
pub(crate) fn idle_cpu(
    k: &KindSections,
    colors: &[Swatch],
    test: &str,
    level: u32,
) -> Option<RankedChart> {
    let bars = k
        .idle
        .iter()
        .filter(|r| r.test == test)
        .filter_map(|r| {
            let l = r.levels.iter().find(|l| l.connections == level)?;
            Some(kind_bar(colors, &r.server, l.cpu_cores_mean, None, ""))
        })
        .collect();
    rank(colors, Measure::IdleCpu, test, level, bars)
}

/// The levels any server held in `test`, ascending.
pub(crate) fn idle_levels(k: &KindSections, test: &str) -> Vec<u32> {
    let mut levels: Vec<u32> = k
        .idle
        .iter()
        .filter(|r| r.test == test)
        .flat_map(|r| r.levels.iter().map(|l| l.connections))
        .collect();
    levels.sort_unstable();
    levels.dedup();
    levels
}

/// Memory per idle connection (KiB), the slope over every level: the
/// chart's "level" is the test's largest.
pub(crate) fn idle_memory(k: &KindSections, colors: &[Swatch], test: &str) -> Option<RankedChart> {
    let rows = || k.idle.iter().filter(|r| r.test == test);
    let largest = rows().map(|r| r.connections).max()?;
    let bars = rows()
        .filter_map(|r| {
            let b = r.bytes_per_connection?;
            Some(kind_bar(colors, &r.server, b / 1024.0, None, ""))
        })
        .collect();
    rank(colors, Measure::IdleMemory, test, largest, bars)
}

/// Seconds until every client of the storm was done.
pub(crate) fn storm_done(
    k: &KindSections,
    colors: &[Swatch],
    test: &str,
    clients: u32,
) -> Option<RankedChart> {
    let bars = k
        .storm
        .iter()
        .filter(|r| r.test == test && r.clients == clients)
        .filter_map(|r| {
            Some(kind_bar(
                colors,
                &r.server,
                r.all_done_s?,
                None,
                client_bound(r.client_bound),
            ))
        })
        .collect();
    rank(colors, Measure::StormDone, test, clients, bars)
}

/// The storm's p99 connect latency (ms), the whisker from p50 to the
/// slowest connect: the three figures the grouped chart had, on one line.
pub(crate) fn storm_connect(
    k: &KindSections,
    colors: &[Swatch],
    test: &str,
    clients: u32,
) -> Option<RankedChart> {
    let ms = |ns: Option<f64>| ns.map(|v| v / 1e6).filter(|v| *v > 0.0);
    let bars = k
        .storm
        .iter()
        .filter(|r| r.test == test && r.clients == clients)
        .filter_map(|r| {
            let p99 = ms(r.connect_p99_ns)?;
            let whisker = ms(r.connect_p50_ns).zip(ms(r.connect_max_ns));
            Some(kind_bar(
                colors,
                &r.server,
                p99,
                whisker,
                client_bound(r.client_bound),
            ))
        })
        .collect();
    rank(colors, Measure::StormConnect, test, clients, bars)
}

/// Server CPU per request (µs) at the fixed rate.
pub(crate) fn fixed_cpu(k: &KindSections, colors: &[Swatch], test: &str) -> Option<RankedChart> {
    let rows = || k.fixed_rate.iter().filter(|r| r.test == test);
    let connections = rows().map(|r| r.connections).max()?;
    let bars = rows()
        .filter_map(|r| {
            let mut bar = kind_bar(
                colors,
                &r.server,
                r.server_cpu_us_per_request?,
                r.cpu_per_request.and_then(|e| e.ci95),
                "",
            );
            // Its rank among the servers that held the rate, with the
            // interval of its CPU per request as the whisker.
            bar.rank = crate::suite_table::rank_text(r.rank);
            if !r.holds_rate {
                bar.flag_text
                    .push("did not hold the rate: shown, not ranked".into());
            }
            Some(bar)
        })
        .collect();
    rank(colors, Measure::FixedCpu, test, connections, bars)
}

/// Each server's requests/s at column `column` of the group as a share of
/// its own keep-alive figure; None without a keep-alive column (the
/// throughput section ranks the short-lived requests/s themselves).
pub(crate) fn short_kept(g: &ShortGroup, colors: &[Swatch], column: usize) -> Option<RankedChart> {
    let keep_alive = g
        .columns
        .iter()
        .position(|c| c.requests_per_connection.is_none())?;
    let test = &g.columns.get(column)?.test;
    let bars = g
        .rows
        .iter()
        .filter_map(|r| {
            let kept = (*r.rps.get(column)?)? / (*r.rps.get(keep_alive)?)?;
            kept.is_finite()
                .then(|| kind_bar(colors, &r.server, kept, None, ""))
        })
        .collect();
    rank(colors, Measure::ShortKept, test, g.connections, bars)
}

fn client_bound(yes: bool) -> &'static str {
    const C: &str = "C";
    debug_assert_eq!(C.chars().next(), Some(Flag::ClientBound.letter()));
    if yes {
        C
    } else {
        ""
    }
}
