//! The ranked charts (issue 29): per test and connection count, one
//! horizontal bar per server, best first, so a chart of 30 servers reads as
//! a list of names with a figure each instead of a legend of 30 colours.
//! The order, whiskers, tiers, shares of the leader and marks are computed
//! here, once, and handed to the page (`#report-ranked`); the summary table
//! takes its row order from the same ranking, so the two cannot disagree.

use std::fmt::Write as _;

use serde::Serialize;

use crate::flag::Flag;
use crate::format::bytes;
use crate::format::thousands;
use crate::html_parts::{esc, flags_html, model_key, no_data};
use crate::model::{Cell, RepetitionFigures, Report};
use crate::palette::{model_color, model_name, Swatch};
use crate::suite_table::tier_mark;

/// What a ranked chart ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Measure {
    /// Requests/s: the figures the row's tiers are cut on.
    Throughput,
    /// p99 latency, lower first.
    Latency,
    /// Cores the server kept busy: neither better nor worse, most first.
    Cpu,
    /// Requests per server CPU-second.
    Efficiency,
    /// Peak RSS, lower first.
    Memory,
    /// The scenario kinds' figures (kind_ranked.rs builds their bars from
    /// the kinds' rows): idle CPU at a level held, lower first.
    IdleCpu,
    /// Memory per idle connection (the PSS fit's slope), lower first.
    IdleMemory,
    /// Seconds until every client of a storm was done, lower first.
    StormDone,
    /// A storm's p99 connect latency, lower first.
    StormConnect,
    /// Server CPU per request at a fixed rate, lower first.
    FixedCpu,
    /// Short-lived requests/s as a share of the server's own keep-alive
    /// figure: how much of it survives new connections, most first.
    ShortKept,
    /// Requests/s over a protocol (TLS, h2, h2c, gRPC) as a share of the
    /// server's own over HTTP/1.1 (protocols.rs's rows), most first.
    ProtocolVsH1,
    /// gRPC's requests/s as a share of the server's own JSON over h2c.
    ProtocolVsH2c,
    /// The good load's worst p99 beside an attack as a multiple of its
    /// baseline (hostile.rs's rows), lower first.
    HostileP99,
}

impl Measure {
    /// Whether a smaller figure ranks first.
    fn lower_first(self) -> bool {
        !matches!(
            self,
            Measure::Throughput
                | Measure::Cpu
                | Measure::Efficiency
                | Measure::ShortKept
                | Measure::ProtocolVsH1
                | Measure::ProtocolVsH2c
        )
    }

    /// Whether the first bar leads, so the others are shown as a share of
    /// it; CPU busy is a cost of the throughput, not a race, and a share
    /// of keep-alive or of HTTP/1.1 is a share already.
    fn has_leader(self) -> bool {
        !matches!(
            self,
            Measure::Cpu
                | Measure::ShortKept
                | Measure::ProtocolVsH1
                | Measure::ProtocolVsH2c
                | Measure::HostileP99
        )
    }

    /// The start of its canvas's id; not `latency`, which the spectrum's
    /// canvases take.
    fn id(self) -> &'static str {
        match self {
            Measure::Throughput => "throughput",
            Measure::Latency => "p99",
            Measure::Cpu => "cpu",
            Measure::Efficiency => "efficiency",
            Measure::Memory => "memory",
            Measure::IdleCpu => "idle-cpu",
            Measure::IdleMemory => "idle-memory",
            Measure::StormDone => "storm-time",
            Measure::StormConnect => "storm-connect",
            Measure::FixedCpu => "fixed-cpu",
            Measure::ShortKept => "short-lived",
            Measure::ProtocolVsH1 => "vs-h1",
            Measure::ProtocolVsH2c => "vs-h2c",
            Measure::HostileP99 => "hostile-p99",
        }
    }

    /// The axis title.
    fn unit(self) -> &'static str {
        match self {
            Measure::Throughput => "requests/s",
            Measure::Latency => "p99 latency (ms, log scale)",
            Measure::Cpu => "server CPU (cores busy)",
            Measure::Efficiency => "requests per server CPU-second",
            Measure::Memory => "server peak RSS (MiB)",
            Measure::IdleCpu => "cores busy while idle (mean over the hold)",
            Measure::IdleMemory => "memory per idle connection (KiB)",
            Measure::StormDone => "seconds until every client was done",
            Measure::StormConnect => "p99 connect latency (ms, log scale)",
            Measure::FixedCpu => "server CPU per request (µs)",
            Measure::ShortKept => "share of its keep-alive requests/s",
            Measure::ProtocolVsH1 => "share of its HTTP/1.1 requests/s",
            Measure::ProtocolVsH2c => "share of its JSON-over-h2c requests/s",
            Measure::HostileP99 => "worst p99 beside an attack, × its baseline (log scale)",
        }
    }

    /// How a figure is written: milliseconds, a percentage or a number.
    fn figure(self) -> &'static str {
        match self {
            Measure::Latency | Measure::StormConnect => "ms",
            Measure::ShortKept | Measure::ProtocolVsH1 | Measure::ProtocolVsH2c => "percent",
            _ => "plain",
        }
    }

    /// What the whisker spans, for the tooltip.
    fn whisker(self) -> &'static str {
        match self {
            Measure::Throughput | Measure::FixedCpu => "95% interval of the median",
            Measure::StormConnect => "p50 to the slowest connect",
            Measure::ProtocolVsH1 | Measure::ProtocolVsH2c => "95% CI",
            Measure::HostileP99 => "best to worst attack",
            _ => "repetitions",
        }
    }

    /// One cell's figure, in the unit of the axis.
    fn of_cell(self, c: &Cell) -> Option<f64> {
        match self {
            Measure::Throughput => c.stats.rps.map(|s| s.median),
            Measure::Latency => c.stats.p99_ns.map(|ns| ns / 1e6),
            Measure::Cpu => c.server_cpu_cores,
            Measure::Efficiency => c.requests_per_cpu_s,
            Measure::Memory => c.peak_rss_bytes.map(|b| b / 1_048_576.0),
            // The kinds' figures are not a throughput cell's.
            _ => None,
        }
    }

    /// One good repetition's figure (throughput takes the cell's values).
    fn of_repetition(self, f: &RepetitionFigures) -> Option<f64> {
        match self {
            Measure::Throughput => Some(f.rps),
            Measure::Latency => Some(f.latency_p99_ns / 1e6),
            Measure::Cpu => f.server.map(|u| u.cpu_cores),
            Measure::Efficiency => f.server.and_then(|u| u.requests_per_cpu_s),
            Measure::Memory => f.server.map(|u| u.peak_rss_bytes as f64 / 1_048_576.0),
            _ => None,
        }
    }
}

/// One server's bar.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RankedBar {
    pub server: String,
    pub model: &'static str,
    pub color: String,
    /// The median over the repetitions, in the axis's unit.
    pub value: f64,
    /// The whisker: the bootstrap 95% interval of the median over rounds
    /// for throughput (none below 5 rounds), the smallest and largest
    /// repetition for the others; None with one repetition.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// `value` over the first bar's value (for a chart with a leader).
    pub share: Option<f64>,
    /// The row's tier (throughput only; None for a noisy cell).
    pub tier: Option<usize>,
    /// The cell's marks (C ~ E F L P K W) and each one's hover text, the
    /// noisy one's with what was going on.
    pub flags: String,
    pub flag_text: Vec<String>,
    /// Each good repetition's figure, a dot each.
    pub repetitions: Vec<f64>,
    /// The rank interval in its row ("2–4"; throughput rows of 5 rounds or
    /// more).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<String>,
    /// The "±x%" of its relative figure (throughput, as `rank`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<String>,
}

/// The model colours a chart's legend names, in the order of the key.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LegendModel {
    pub model: &'static str,
    pub color: String,
}

/// One ranked chart: a test at a connection count, one measure.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RankedChart {
    pub measure: Measure,
    pub test: String,
    pub connections: u32,
    pub unit: &'static str,
    pub log: bool,
    /// Whether the lowest figure ranks first (the page writes shares as
    /// multiples of the lowest then, and the checker verifies the order).
    pub lower_first: bool,
    /// "ms", "percent" or "plain": how the page writes a figure.
    pub figure: &'static str,
    /// What a whisker spans.
    pub whisker: &'static str,
    /// A figure the page marks across the bars with a dashed line: 100%
    /// (no change) on a chart of shares of a server's own baseline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<f64>,
    pub bars: Vec<RankedBar>,
    pub models: Vec<LegendModel>,
}

/// The hover text of each mark of a cell.
fn flag_text(c: &Cell) -> Vec<String> {
    c.flags
        .chars()
        .map(|f| {
            let flag = Flag::from_letter(f);
            let mut t = format!("{f}: {}", flag.map_or("", Flag::title));
            if flag == Some(Flag::Noisy) {
                if let Some(why) = c.stats.noise.and_then(|n| n.describe()) {
                    let _ = write!(t, "; {why}");
                }
            }
            t
        })
        .collect()
}

/// The chart of `measure` at one test and connection count; None when no
/// server has the figure.
pub(crate) fn ranked_chart(
    r: &Report,
    colors: &[Swatch],
    measure: Measure,
    test: &str,
    connections: u32,
) -> Option<RankedChart> {
    let bars: Vec<RankedBar> = r
        .columns
        .iter()
        .filter_map(|server| r.cell(test, connections, server))
        .filter_map(|c| bar(r, colors, measure, c))
        .collect();
    rank(colors, measure, test, connections, bars)
}

/// The chart of `bars` (in column order) ranked by `measure`: the one
/// ordering, shares and legend every ranked chart gets, the kinds' too.
pub(crate) fn rank(
    colors: &[Swatch],
    measure: Measure,
    test: &str,
    connections: u32,
    mut bars: Vec<RankedBar>,
) -> Option<RankedChart> {
    if bars.is_empty() {
        return None;
    }
    let first = |a: &RankedBar, b: &RankedBar| {
        if measure.lower_first() {
            a.value.total_cmp(&b.value)
        } else {
            b.value.total_cmp(&a.value)
        }
    };
    // Stable: equal figures keep the column order.
    bars.sort_by(first);
    if measure == Measure::Throughput {
        keep_tiers_together(&mut bars);
    }
    if measure.has_leader() {
        let top = bars[0].value;
        for b in &mut bars {
            b.share = (top > 0.0).then(|| b.value / top);
        }
    }
    let mut models: Vec<LegendModel> = Vec::new();
    for b in &bars {
        if !models.iter().any(|m| m.model == b.model) {
            let model = colors
                .iter()
                .find(|s| s.label == b.server)
                .and_then(|s| s.model);
            models.push(LegendModel {
                model: b.model,
                color: model_color(model),
            });
        }
    }
    let order = |name: &str| colors.iter().position(|s| model_name(s.model) == name);
    models.sort_by_key(|m| order(m.model));
    Some(RankedChart {
        measure,
        test: test.to_string(),
        connections,
        unit: measure.unit(),
        log: matches!(
            measure,
            Measure::Latency | Measure::StormConnect | Measure::HostileP99
        ),
        lower_first: measure.lower_first(),
        figure: measure.figure(),
        whisker: measure.whisker(),
        reference: matches!(
            measure,
            Measure::ProtocolVsH1 | Measure::ProtocolVsH2c | Measure::HostileP99
        )
        .then_some(1.0),
        bars,
        models,
    })
}

fn bar(r: &Report, colors: &[Swatch], measure: Measure, c: &Cell) -> Option<RankedBar> {
    // A cell without a good repetition has nothing to rank.
    let value = c.stats.rps.and_then(|_| measure.of_cell(c))?;
    if !value.is_finite() || (measure == Measure::Latency && value <= 0.0) {
        return None;
    }
    let swatch = colors.iter().find(|s| s.label == c.server);
    let (repetitions, low, high, tier) = if measure == Measure::Throughput {
        let (low, high) = c
            .stats
            .rps_median
            .and_then(|m| m.ci95)
            .map_or((None, None), |(lo, hi)| (Some(lo.max(0.0)), Some(hi)));
        (c.stats.rps_values.clone(), low, high, c.stats.tier)
    } else {
        let reps: Vec<f64> = r
            .repetitions
            .iter()
            .filter(|x| x.test == c.test && x.connections == c.connections && x.server == c.server)
            .filter_map(|x| x.result.as_ref())
            .filter_map(|f| measure.of_repetition(f))
            .filter(|v| v.is_finite())
            .collect();
        let spread = reps.len() > 1;
        let low = spread.then(|| reps.iter().copied().fold(f64::INFINITY, f64::min));
        let high = spread.then(|| reps.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        (reps, low, high, None)
    };
    let throughput = measure == Measure::Throughput;
    Some(RankedBar {
        server: c.server.clone(),
        model: model_name(swatch.and_then(|s| s.model)),
        color: swatch.map_or(model_color(None), |s| s.color.clone()),
        value,
        low,
        high,
        share: None,
        tier,
        flags: c.flags.clone(),
        flag_text: flag_text(c),
        repetitions,
        rank: throughput
            .then(|| crate::suite_table::rank_text(c.stats.rank))
            .flatten(),
        spread: throughput
            .then(|| crate::suite_table::spread_text(c.stats.relative_half_width))
            .flatten(),
    })
}

/// A bar of a scenario kind's figure: `value` a median over the
/// repetitions, the whisker from `low` to `high` when the kind has one.
pub(crate) fn kind_bar(
    colors: &[Swatch],
    server: &str,
    value: f64,
    whisker: Option<(f64, f64)>,
    flags: &str,
) -> RankedBar {
    let swatch = colors.iter().find(|s| s.label == server);
    RankedBar {
        server: server.to_string(),
        model: model_name(swatch.and_then(|s| s.model)),
        color: swatch.map_or(model_color(None), |s| s.color.clone()),
        value,
        low: whisker.map(|w| w.0),
        high: whisker.map(|w| w.1),
        share: None,
        tier: None,
        flags: flags.to_string(),
        flag_text: flags
            .chars()
            .map(|f| format!("{f}: {}", Flag::from_letter(f).map_or("", Flag::title)))
            .collect(),
        repetitions: Vec::new(),
        rank: None,
        spread: None,
    }
}

/// Tiers are cut on geometric means, the bars sorted by medians: the two
/// orders can differ by a place at a tier's edge. The servers with a tier
/// are put back in tier order (medians within a tier), in the places the
/// tiered servers held, so a tier is one run of bars; a noisy server (no
/// tier) keeps the place its median gives it.
fn keep_tiers_together(bars: &mut [RankedBar]) {
    let places: Vec<usize> = (0..bars.len())
        .filter(|&i| bars[i].tier.is_some())
        .collect();
    let mut tiered: Vec<RankedBar> = places.iter().map(|&i| bars[i].clone()).collect();
    // Stable: within a tier the median order stays.
    tiered.sort_by_key(|b| b.tier);
    for (place, b) in places.into_iter().zip(tiered) {
        bars[place] = b;
    }
}

/// The servers in the order of the first throughput row's chart, then
/// those it does not have, in column order: the summary table's rows.
pub(crate) fn summary_order(r: &Report, colors: &[Swatch]) -> Vec<String> {
    let mut order: Vec<String> = r
        .tests
        .iter()
        .flat_map(|t| t.connections.iter().map(move |&c| (t, c)))
        .find_map(|(t, c)| ranked_chart(r, colors, Measure::Throughput, &t.name, c))
        .map(|chart| chart.bars.into_iter().map(|b| b.server).collect())
        .unwrap_or_default();
    for s in &r.columns {
        if !order.contains(s) {
            order.push(s.clone());
        }
    }
    order
}

/// The page's ranked charts, in the order their canvases are written; each
/// canvas names its chart by index.
#[derive(Debug, Default)]
pub(crate) struct RankedCharts {
    pub charts: Vec<RankedChart>,
}

impl RankedCharts {
    /// Writes the figure of `chart` and keeps it for the page's JSON.
    pub(crate) fn figure(&mut self, b: &mut String, chart: RankedChart, caption: &str) {
        let i = self.charts.len();
        let id = format!(
            "{}-{}-{}",
            chart.measure.id(),
            chart.test,
            chart.connections
        );
        let _ = write!(
            b,
            "<figure class=\"ranked\"><figcaption>{}</figcaption><div class=\"chart ranked\" \
             style=\"height:{}px\"><canvas id=\"{}\" data-chart=\"ranked\" data-index=\"{i}\" \
             data-test=\"{}\" data-connections=\"{}\"></canvas></div></figure>",
            esc(caption),
            chart_height(chart.bars.len()),
            esc(&id),
            esc(&chart.test),
            chart.connections
        );
        self.charts.push(chart);
    }
}

/// Pixels per bar: a bar of at least 14 px and a readable name beside it,
/// so 30 servers stay readable; and the room the axis and legend take.
const ROW_PX: usize = 22;
const FRAME_PX: usize = 86;

/// The chart's height for `bars` servers, set in the page so a print or a
/// screenshot has it before the script runs.
fn chart_height(bars: usize) -> usize {
    FRAME_PX + ROW_PX * bars.max(3)
}

/// The throughput section: a ranked chart per test and connection count.
pub(crate) fn throughput_html(
    b: &mut String,
    r: &Report,
    colors: &[Swatch],
    out: &mut RankedCharts,
) {
    let _ = write!(
        b,
        "<section id=\"throughput\"><h2>Throughput</h2><p class=\"legend\">One chart per test and \
         connection count, the servers ranked by median requests/s over the rounds, the fastest \
         on top. The whisker is the bootstrap 95% interval of that median (rows of 5 rounds or \
         more; past 1.3 times the top bar it is cut at the axis's end, and the tooltip gives \
         both ends) and each dot one round. Beside each bar, in a column on the right: the \
         median and its share of the top server's, then its rank interval in the row (#2–4: \
         ranked 2nd to 4th in 95% of resamples of the rounds, by the relative figure, its \
         requests/s over the row's geometric mean in the same round); flag marks after it \
         qualify the figure (C client-bound, ~ noisy, …; hover a bar for what each \
         means). T1, T2… after a name is the server's tier (T1 the fastest): servers the \
         rounds cannot tell apart share a tier, and each tier is a band of bars, shaded \
         alternately; a noisy server has no tier. Bars take their server's colour, a shade of \
         its threading model's hue (the legend names the models).</p>",
    );
    for note in r.rows.iter().filter_map(|row| row.client_bound_note()) {
        let _ = write!(b, "<p class=\"note client-bound\">{}</p>", esc(&note));
    }
    model_key(b, r, colors);
    b.push_str("<div class=\"charts wide\">");
    for t in &r.tests {
        for &c in &t.connections {
            let at = format!("{} at {} connections", t.name, thousands(u64::from(c)));
            match ranked_chart(r, colors, Measure::Throughput, &t.name, c) {
                Some(chart) => out.figure(b, chart, &format!("{at}: requests/s")),
                None => no_data(b, &format!("{at}: no server produced a result")),
            }
        }
    }
    b.push_str("</div></section>");
}

/// The latency section: p99 ranked per test and connection count, then
/// the spectrum of every server (a curve each, the legend by model).
pub(crate) fn latency_html(b: &mut String, r: &Report, colors: &[Swatch], out: &mut RankedCharts) {
    b.push_str(
        "<section id=\"latency\"><h2>Latency</h2><p class=\"legend\">First, each server's p99 \
         latency (the median over the repetitions), ranked lowest first on a log scale; the \
         whisker runs from the smallest to the largest repetition's p99, each dot one \
         repetition, and beside each bar its multiple of the lowest (×3.2: 3.2 times the \
         lowest p99). The names are on the axis; the legend names the threading models. Then the \
         spectrum: latency at each percentile from p50 to p99.99, from every answer of every \
         repetition (the stored HdrHistograms added together). Its x axis spaces the nines \
         evenly; the y axis is logarithmic. A line stops where the answers run out: p99.99 \
         needs 10,000 answers. Each line is named at its end, right of the plot (names pushed \
         apart where the ends crowd, a thin leader from each line to its name); with more than 8 \
         servers the legend names the threading models (click one to hide or show its \
         servers).</p>",
    );
    b.push_str("<div class=\"charts wide\">");
    for t in &r.tests {
        for &c in &t.connections {
            let at = format!("{} at {} connections", t.name, thousands(u64::from(c)));
            match ranked_chart(r, colors, Measure::Latency, &t.name, c) {
                Some(chart) => out.figure(b, chart, &format!("{at}: p99 latency")),
                None => no_data(b, &format!("{at}: no answers")),
            }
        }
    }
    for t in &r.tests {
        for &c in &t.connections {
            let caption = format!(
                "{} at {} connections: latency spectrum",
                t.name,
                thousands(u64::from(c))
            );
            let has = r
                .cells
                .iter()
                .any(|x| x.test == t.name && x.connections == c && x.latency.is_some());
            if has {
                crate::html_parts::canvas_full(b, "latency", &t.name, Some(c), &caption);
            }
        }
    }
    b.push_str("</div></section>");
}

/// The server CPU and memory section: three ranked charts per test and
/// connection count, then the table of every cell.
pub(crate) fn resources_html(
    b: &mut String,
    r: &Report,
    colors: &[Swatch],
    out: &mut RankedCharts,
) {
    b.push_str(
        "<section id=\"resources\"><h2>Server CPU and memory</h2><p class=\"legend\">From /proc \
         samples of the server's whole process tree, 10 a second, during the measured part of \
         each repetition (medians over the repetitions; the whisker from the smallest to the \
         largest repetition, a dot each, cut at the axis's end past 1.3 times the largest \
         bar). Server CPU is ranked most first: it is what the \
         throughput cost, not a score. Requests per CPU-second is requests/s over the cores the \
         server kept busy: how much work each unit of CPU buys, the most first. Peak RSS is \
         ranked the least first, beside each bar its multiple of the least (×3.2). RSS \
         per connection (the table) is the growth of peak RSS from the smallest connection \
         count of the test, per added connection. Bytes per answer (the table) is what the \
         client read while measuring over the answers it counted: head and body as the server \
         sent them, so a compressed answer counts its compressed size.</p>",
    );
    // One measure across the tests before the next, so a row of the grid
    // puts the same measure side by side.
    b.push_str("<div class=\"charts wide\">");
    for (measure, what) in [
        (Measure::Cpu, "server CPU (cores)"),
        (Measure::Efficiency, "requests per server CPU-second"),
        (Measure::Memory, "server peak RSS (MiB)"),
    ] {
        for t in &r.tests {
            for &c in &t.connections {
                let at = format!(
                    "{} at {} connections: {what}",
                    t.name,
                    thousands(u64::from(c))
                );
                match ranked_chart(r, colors, measure, &t.name, c) {
                    Some(chart) => out.figure(b, chart, &at),
                    None => no_data(b, &format!("{at}: no samples")),
                }
            }
        }
    }
    b.push_str("</div>");
    resources_table(b, r);
    b.push_str("</section>");
}

/// Every cell's server CPU and memory figures, under the section's charts.
pub(crate) fn resources_table(b: &mut String, r: &Report) {
    b.push_str(
        "<table class=\"grid\"><thead><tr><th>server</th><th>test</th><th>connections</th>\
        <th>requests/s</th><th>server CPU</th><th>requests per CPU-s</th><th>peak RSS</th>\
        <th>RSS per connection</th><th>bytes per answer</th></tr></thead><tbody>",
    );
    for c in &r.cells {
        let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
        let _ = write!(
            b,
            "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}{} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.server),
            esc(&c.test),
            thousands(u64::from(c.connections)),
            opt(c.stats.rps.map(|s| s.median), &|v| thousands(v.round() as u64)),
            tier_mark(c.stats.tier).map_or(String::new(), |t| format!(" {t}")),
            flags_html(&c.flags),
            opt(c.server_cpu_cores, &|v| format!("{v:.2} cores")),
            opt(c.requests_per_cpu_s, &|v| thousands(v.round() as u64)),
            opt(c.peak_rss_bytes, &|v| bytes(v as u64)),
            opt(c.rss_per_connection, &|v| if v < 0.0 {
                format!("{:.1} KiB (shrank)", v / 1024.0)
            } else {
                format!("{:.1} KiB", v / 1024.0)
            }),
            opt(c.bytes_per_answer, &|v| thousands(v.round() as u64)),
        );
    }
    b.push_str("</tbody></table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(server: &str, value: f64, tier: Option<usize>) -> RankedBar {
        RankedBar {
            server: server.into(),
            model: "event-loop",
            color: "#000000".into(),
            value,
            low: None,
            high: None,
            share: None,
            tier,
            flags: String::new(),
            flag_text: Vec::new(),
            repetitions: Vec::new(),
            rank: None,
            spread: None,
        }
    }

    #[test]
    fn a_tier_is_one_run_of_bars_and_a_noisy_server_keeps_its_place() {
        // b's median is above c's, but the geometric means put c in T1.
        let mut bars = vec![
            bar("a", 100.0, Some(1)),
            bar("n", 99.0, None),
            bar("b", 98.0, Some(2)),
            bar("c", 97.0, Some(1)),
            bar("d", 50.0, Some(2)),
        ];
        keep_tiers_together(&mut bars);
        let order: Vec<&str> = bars.iter().map(|b| b.server.as_str()).collect();
        assert_eq!(order, ["a", "n", "c", "b", "d"]);
    }

    #[test]
    fn thirty_servers_get_bars_of_at_least_ten_pixels() {
        // Chart.js gives a category 80% of its row and a bar 90% of that.
        let bar_px = ROW_PX as f64 * 0.8 * 0.9;
        assert!(bar_px >= 14.0, "{bar_px}");
        assert_eq!(chart_height(30), FRAME_PX + 30 * ROW_PX);
        assert_eq!(chart_height(1), chart_height(3));
    }
}
