//! Warm-until-steady (issue 28): when a server's throughput has stopped
//! moving, and what shape its whole curve had. Pure: it reads the requests/s
//! of consecutive short windows (0.5 s each by default) and never measures.
//!
//! Two questions, two functions:
//!
//! - **Online** ([`SteadyDetector::push`]): after each window, keep warming
//!   or start measuring. It must start within a few seconds on a flat, noisy
//!   curve (a native server; windows vary by ~15% on a shared VM) and keep
//!   warming while a JIT curve still climbs (10–40x over 5–30 s).
//! - **After the fact** ([`classify`]): the whole curve (warm-up and, if the
//!   caller pushes them, the measured windows) in the four classes of Barrett
//!   et al., "Virtual Machine Warmup Blows Hot and Cold" (OOPSLA 2017): flat,
//!   warmed up, slowdown, no steady state.
//!
//! Everything works on `ln(requests/s)`: noise and JIT gains are ratios, and
//! on logarithms a 15% wobble is the same size at 800 requests/s as at
//! 80,000. A window below 1 request/s counts as 1 (a stalled window is a
//! real, very low value, not a hole); a NaN, infinite or negative value is a
//! hole: skipped by every statistic, while the window still counts as time.
//!
//! # The online rule
//!
//! With `n` windows pushed, the detector settles when all of these hold
//! (defaults in brackets, windows of 0.5 s):
//!
//! 1. `n >= min_windows` [6, 3 s]: nothing can be said about trend from
//!    fewer points at this noise.
//! 2. **No monotone trend** over the last `min(n, trend_span)` windows
//!    [40, 20 s]: the Mann–Kendall test (a rank test, so one stalled window
//!    cannot dominate it) at 5% two-sided, |Z| < 1.96. Taking the long span
//!    (the whole curve while it is shorter than 20 s) is what keeps a JIT
//!    curve warming through its tail: the climb stays in the span and keeps
//!    the test significant until the plateau has dominated it, and the test
//!    has far more power over 20 s than over 3 s against a 15% noise. On a
//!    flat curve it passes 95% of the time at the first look.
//! 3. **Small drift**: the Theil–Sen slope (median of pairwise slopes;
//!    robust to up to ~29% outlying windows) over the last half of the
//!    windows (at least `min_windows`, at most `trend_span`), times the
//!    span, is within `drift_tolerance` [0.15, about 16%]; over the whole
//!    trend span within twice that. Judging the last *half* makes the rule
//!    scale-free: on a curve that approaches its plateau exponentially, the
//!    gain still to come is at most the gain over the last half of the
//!    elapsed time once that half spans more than ~1.4 time constants,
//!    whatever the time constant is. 0.15 is about one standard deviation
//!    of that drift over 3 s at 15% window noise: looser lets a JIT tail
//!    settle at ~75% of its plateau; tighter keeps flat curves waiting for
//!    the noise to line up. The whole-span check catches a fast first climb
//!    followed by a few windows that happen to look level.
//! 4. **Bounded spread**: the standard deviation of the windows around that
//!    line, the largest residual left out (one stalled window does not
//!    count), is at most `max_spread` [0.30, twice this VM's window noise]:
//!    a curve that swings 3x from second to second has no level to measure,
//!    even when its trend is nil.
//!
//! At `cap` windows [120, 60 s] the detector gives up: [`Decision::CapReached`].
//!
//! Measured on synthetic curves with this VM's noise (the tests below):
//! flat curves settle after 6 windows at the median, within 16 in 99.1% of
//! 1,000 seeds; a JIT curve rising 10–40x (95% of it within 5–30 s, biggest
//! gains first) settles at ≥ 94% of its plateau in 200 of 200 seeds.
//!
//! What it cannot see: a change slower than the noise of the last few
//! seconds. A curve that stays flat for longer than the first `min_windows`
//! and only then starts to climb (or an S-shaped climb over 15–30 s, which
//! gains under 10% per second at first) looks flat when it settles; so does
//! the turn of a curve that keeps drifting up and down. [`classify`] over
//! the warm-up and the measured windows shows it afterwards (warmed with
//! `steady_from` past the settle point, or no steady state); a runtime
//! known to start late can be given a larger `min_windows`.
//!
//! # The classification
//!
//! 1. **Changepoints**: the curve is cut into segments of constant mean by
//!    optimal partitioning (exact dynamic programming; the curve is at most
//!    a few hundred windows) minimising the squared error plus a penalty per
//!    segment of `penalty` [3] × σ² × ln n, where σ is the window noise
//!    estimated from the median absolute first difference (a level shift
//!    moves one difference, so it does not inflate σ). 2 ln n is the BIC
//!    penalty of a mean shift; 3 leaves flat noisy curves of 60 s in one
//!    piece in 199 of 200 seeds. A change of level Δ between stretches of
//!    n₁ and n₂ windows is found when n₁n₂/(n₁+n₂)·Δ² exceeds the penalty:
//!    between two 10 s stretches at 15% noise, from a change of about 20%.
//!    A segment of one window (a stall, a burst) is an outlier, not a
//!    level, and is dropped.
//! 2. **Equivalence**: adjacent segments whose means differ by at most
//!    `equivalence` [0.10, ~10%] are merged (closest pair first): a change
//!    below that is not worth a class on a machine whose windows move 15%.
//! 3. The last segment is the steady state if it lasts `min_windows` and has
//!    no trend of its own (not both Mann–Kendall |Z| ≥ 2.58 and a Theil–Sen
//!    drift across it above `equivalence`; 1% because the test reads up to
//!    hundreds of windows, where a few percent is already significant at
//!    5%); otherwise **no steady state**. So is a curve whose levels of at
//!    least `min_windows` change direction twice or more (up–down–up).
//! 4. **Flat** when every earlier level is within `equivalence` of the last;
//!    **slowdown** when one was faster by more (the server lost a level it
//!    had reached, as in Barrett et al.); otherwise **warmed**.
//!
//! `time_to_steady` is the start of the last segment.

use std::time::Duration;

/// The settings of steady-state detection. See the module documentation for
/// what each one does and why its default has its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyConfig {
    /// The length of one window: turns window counts into time.
    pub window: Duration,
    /// Windows before any judgement, and the shortest steady segment.
    pub min_windows: usize,
    /// The most recent windows the trend test reads.
    pub trend_span: usize,
    /// The largest change (log units, 0.15 ≈ 16%) across the last half of
    /// the curve that still counts as settled.
    pub drift_tolerance: f64,
    /// The largest robust spread (log units) around the trend line.
    pub max_spread: f64,
    /// Windows after which the detector gives up.
    pub cap: usize,
    /// Segment means closer than this (log units) are the same level.
    pub equivalence: f64,
    /// The changepoint penalty, in units of σ² ln n.
    pub penalty: f64,
}

impl Default for SteadyConfig {
    fn default() -> Self {
        SteadyConfig {
            window: Duration::from_millis(500),
            min_windows: 6,
            trend_span: 40,
            drift_tolerance: 0.15,
            max_spread: 0.30,
            cap: 120,
            equivalence: 0.10,
            penalty: 3.0,
        }
    }
}

impl SteadyConfig {
    /// Checks the settings: a message naming the field when one makes no
    /// sense.
    pub fn check(&self) -> Result<(), String> {
        if self.window.is_zero() {
            return Err("the steady-state window must be longer than zero".into());
        }
        if self.min_windows < 3 {
            return Err(
                "steady-state min_windows must be at least 3: a trend needs 3 points".into(),
            );
        }
        if self.trend_span < self.min_windows {
            return Err(format!(
                "steady-state trend_span ({}) must be at least min_windows ({})",
                self.trend_span, self.min_windows
            ));
        }
        if self.cap < self.min_windows {
            return Err(format!(
                "steady-state cap ({}) must be at least min_windows ({})",
                self.cap, self.min_windows
            ));
        }
        for (name, v) in [
            ("drift_tolerance", self.drift_tolerance),
            ("max_spread", self.max_spread),
            ("equivalence", self.equivalence),
            ("penalty", self.penalty),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!(
                    "steady-state {name} must be a positive number, not {v}"
                ));
            }
        }
        Ok(())
    }

    fn duration_of(&self, windows: usize) -> Duration {
        self.window
            .saturating_mul(u32::try_from(windows).unwrap_or(u32::MAX))
    }
}

/// What to do after a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Not steady yet: warm for another window.
    KeepWarming,
    /// Steady after `windows` windows of warm-up: measure now. Sticky: later
    /// pushes return it again.
    Settled { windows: usize },
    /// `cap` windows without settling: measure anyway and say so. Sticky.
    CapReached,
}

/// Decides, window after window, when warm-up is over.
#[derive(Debug, Clone)]
pub struct SteadyDetector {
    cfg: SteadyConfig,
    /// Every window pushed, as given (holes included), so [`classify`] can
    /// read the whole curve.
    curve: Vec<f64>,
    decision: Decision,
}

impl SteadyDetector {
    /// A detector with these settings; call [`SteadyConfig::check`] first on
    /// settings a user typed (the detector does not repeat it).
    pub fn new(cfg: SteadyConfig) -> Self {
        SteadyDetector {
            cfg,
            curve: Vec::new(),
            decision: Decision::KeepWarming,
        }
    }

    /// Records the requests/s of the window that just ended and decides.
    pub fn push(&mut self, rps: f64) -> Decision {
        self.curve.push(rps);
        if self.decision != Decision::KeepWarming {
            return self.decision;
        }
        let n = self.curve.len();
        if n >= self.cfg.min_windows && self.settled() {
            self.decision = Decision::Settled { windows: n };
        } else if n >= self.cfg.cap {
            self.decision = Decision::CapReached;
        }
        self.decision
    }

    /// The latest decision.
    pub fn decision(&self) -> Decision {
        self.decision
    }

    /// Every window pushed so far, as pushed.
    pub fn curve(&self) -> &[f64] {
        &self.curve
    }

    /// The warm-up time so far (windows pushed × window length).
    pub fn elapsed(&self) -> Duration {
        self.cfg.duration_of(self.curve.len())
    }

    /// [`classify`] of every window pushed so far.
    pub fn classify(&self) -> SteadyState {
        classify(&self.curve, &self.cfg)
    }

    fn settled(&self) -> bool {
        let cfg = &self.cfg;
        let n = self.curve.len();
        let trend = points(&self.curve[n - n.min(cfg.trend_span)..]);
        let half = n.div_ceil(2).clamp(cfg.min_windows, cfg.trend_span);
        let recent = points(&self.curve[n - half..]);
        if recent.len() < 3 {
            return false;
        }
        let slope = theil_sen(&recent);
        let drift = slope * (half - 1) as f64;
        let long_drift = theil_sen(&trend) * (n.min(cfg.trend_span) - 1) as f64;
        mann_kendall_z(&trend).abs() < Z_975
            && long_drift.abs() <= 2.0 * cfg.drift_tolerance
            && drift.abs() <= cfg.drift_tolerance
            && trimmed_spread(&recent, slope) <= cfg.max_spread
    }
}

/// The shape of a whole curve, after Barrett et al.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteadyClass {
    /// One level from the first window.
    Flat,
    /// Slower levels first, then a steady one above all of them.
    Warmed,
    /// Steady, but below a level the server held earlier.
    Slowdown,
    /// The curve still moves at its end, or changes direction repeatedly.
    NoSteadyState,
}

impl SteadyClass {
    /// A stable name for storage and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SteadyClass::Flat => "flat",
            SteadyClass::Warmed => "warmed",
            SteadyClass::Slowdown => "slowdown",
            SteadyClass::NoSteadyState => "no-steady-state",
        }
    }
}

/// A stretch of windows at one level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// The first window (0-based).
    pub start: usize,
    /// One past the last window.
    pub end: usize,
    /// The geometric mean of its requests/s (holes left out).
    pub rps: f64,
}

/// The classification of a curve.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyState {
    pub class: SteadyClass,
    /// When the steady segment began (its first window × the window length);
    /// None without a steady state.
    pub time_to_steady: Option<Duration>,
    /// The first window of the steady segment; None without one.
    pub steady_from: Option<usize>,
    /// The geometric mean of the steady segment's requests/s.
    pub steady_rps: Option<f64>,
    /// The levels found, in order, equivalent neighbours merged.
    pub segments: Vec<Segment>,
    /// The window noise used (log units): the robust standard deviation of
    /// the windows around their level.
    pub noise: f64,
}

/// The two-sided 5% critical value of the standard normal.
const Z_975: f64 = 1.959_964;

/// The two-sided 1% critical value: the steady segment's own trend test,
/// strict because it is read on up to hundreds of windows, where a drift of
/// a few percent is already significant at 5%.
const Z_995: f64 = 2.575_829;

/// Windows further than this many noise deviations from their level are
/// left out of the steady segment's trend test (stalls, bursts).
const OUTLIER: f64 = 4.0;

/// Floor of the noise estimate (log units): a curve of identical values
/// would otherwise make every difference a changepoint.
const NOISE_FLOOR: f64 = 0.01;

/// Classifies a whole curve of per-window requests/s (see the module
/// documentation for the method). Never panics: fewer than `min_windows`
/// usable windows is no steady state.
pub fn classify(curve: &[f64], cfg: &SteadyConfig) -> SteadyState {
    let pts = points(curve);
    let none = |segments: Vec<Segment>, noise: f64| SteadyState {
        class: SteadyClass::NoSteadyState,
        time_to_steady: None,
        steady_from: None,
        steady_rps: None,
        segments,
        noise,
    };
    if pts.len() < cfg.min_windows.max(3) {
        return none(Vec::new(), 0.0);
    }
    let noise = difference_noise(&pts).max(NOISE_FLOOR);
    let beta = cfg.penalty * noise * noise * (pts.len() as f64).ln();
    let mut levels: Vec<Level> = partition(&pts, beta);
    // A level of one window is a stalled or a lucky window, not a level.
    levels.retain(|l| l.n > 1);
    let mut levels = merge_equivalent(levels, cfg.equivalence);
    let segments = segments(&levels, &pts, curve.len());
    let Some(last) = levels.pop() else {
        return none(segments, noise);
    };
    let tail: Vec<(f64, f64)> = pts[last.from..last.to]
        .iter()
        .copied()
        .filter(|p| (p.1 - last.mean()).abs() < OUTLIER * noise)
        .collect();
    let tail_span = tail.last().map_or(0.0, |p| p.0) - tail.first().map_or(0.0, |p| p.0);
    let drifting = mann_kendall_z(&tail).abs() >= Z_995
        && (theil_sen(&tail) * tail_span).abs() > cfg.equivalence;
    let steady_start = segments.last().map_or(0, |s| s.start);
    let too_short = curve.len() - steady_start < cfg.min_windows;
    let long: Vec<f64> = levels
        .iter()
        .filter(|l| l.n >= cfg.min_windows)
        .map(Level::mean)
        .chain([last.mean()])
        .collect();
    if too_short || drifting || reversals(&long) >= 2 {
        return none(segments, noise);
    }
    let above = |l: &Level| l.mean() - last.mean() > cfg.equivalence;
    let below = |l: &Level| last.mean() - l.mean() > cfg.equivalence;
    let class = if levels.iter().any(above) {
        SteadyClass::Slowdown
    } else if levels.iter().any(below) {
        SteadyClass::Warmed
    } else {
        SteadyClass::Flat
    };
    SteadyState {
        class,
        time_to_steady: Some(cfg.duration_of(steady_start)),
        steady_from: Some(steady_start),
        steady_rps: Some(last.mean().exp()),
        segments,
        noise,
    }
}

/// `(window index, ln rps)` of the usable windows of `curve`.
fn points(curve: &[f64]) -> Vec<(f64, f64)> {
    curve
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_finite() && **r >= 0.0)
        .map(|(i, r)| (i as f64, r.max(1.0).ln()))
        .collect()
}

/// netbench-stats' median (0 for no values: a flat line).
fn median(v: &mut [f64]) -> f64 {
    netbench_stats::median_in_place(v).unwrap_or(0.0)
}

/// The Theil–Sen slope (per window): the median of the slopes of all pairs.
/// 0 with fewer than two points.
fn theil_sen(pts: &[(f64, f64)]) -> f64 {
    let mut slopes = Vec::with_capacity(pts.len() * pts.len() / 2);
    for (i, a) in pts.iter().enumerate() {
        for b in &pts[i + 1..] {
            slopes.push((b.1 - a.1) / (b.0 - a.0));
        }
    }
    median(&mut slopes)
}

/// The standard deviation of the residuals around the Theil–Sen line of
/// slope `slope` (its intercept the median of `y − slope·x`), the largest
/// residual left out: one stalled window does not count, two windows of
/// another level do. (A median absolute residual would not do: it ignores
/// an oscillation whose other level holds fewer than half the windows.)
fn trimmed_spread(pts: &[(f64, f64)], slope: f64) -> f64 {
    let mut intercepts: Vec<f64> = pts.iter().map(|(x, y)| y - slope * x).collect();
    let intercept = median(&mut intercepts);
    let mut squares: Vec<f64> = pts
        .iter()
        .map(|(x, y)| (y - intercept - slope * x).powi(2))
        .collect();
    squares.sort_by(f64::total_cmp);
    squares.pop();
    if squares.len() < 2 {
        return 0.0;
    }
    (squares.iter().sum::<f64>() / (squares.len() - 1) as f64).sqrt()
}

/// The Mann–Kendall trend statistic as a standard normal Z (with the tie
/// correction of the variance and a continuity correction). 0 with fewer
/// than 3 points or when every value is tied.
fn mann_kendall_z(pts: &[(f64, f64)]) -> f64 {
    let n = pts.len();
    if n < 3 {
        return 0.0;
    }
    let mut s: i64 = 0;
    for (i, a) in pts.iter().enumerate() {
        for b in &pts[i + 1..] {
            s += match b.1.total_cmp(&a.1) {
                std::cmp::Ordering::Greater => 1,
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
            };
        }
    }
    let mut ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
    ys.sort_by(f64::total_cmp);
    let var_term = |t: f64| t * (t - 1.0) * (2.0 * t + 5.0);
    let mut ties = 0.0;
    let mut i = 0;
    while i < n {
        let t = ys[i..].iter().take_while(|&&y| y == ys[i]).count();
        ties += var_term(t as f64);
        i += t;
    }
    let var = (var_term(n as f64) - ties) / 18.0;
    if var <= 0.0 || s == 0 {
        return 0.0;
    }
    (s - s.signum()) as f64 / var.sqrt()
}

/// The window noise σ (log units) from the first differences: 1.4826 × their
/// median absolute deviation / √2. A level shift changes one difference, so
/// changepoints barely move it.
fn difference_noise(pts: &[(f64, f64)]) -> f64 {
    let mut diffs: Vec<f64> = pts.windows(2).map(|w| w[1].1 - w[0].1).collect();
    let centre = median(&mut diffs.clone());
    let mut dev: Vec<f64> = diffs.iter_mut().map(|d| (*d - centre).abs()).collect();
    1.4826 * median(&mut dev) / std::f64::consts::SQRT_2
}

/// A run of points at one level: within `pts[from..to]`, `n` points (a
/// level of one point dropped between two merged ones is not counted)
/// summing to `sum`.
#[derive(Debug, Clone, Copy)]
struct Level {
    from: usize,
    to: usize,
    n: usize,
    sum: f64,
}

impl Level {
    fn mean(&self) -> f64 {
        self.sum / self.n as f64
    }
}

/// The windows each level covers: from its first point (the first level
/// from window 0) to the next level's start (the last to the curve's end).
fn segments(levels: &[Level], pts: &[(f64, f64)], windows: usize) -> Vec<Segment> {
    let starts: Vec<usize> = levels
        .iter()
        .enumerate()
        .map(|(i, l)| if i == 0 { 0 } else { pts[l.from].0 as usize })
        .collect();
    levels
        .iter()
        .enumerate()
        .map(|(i, l)| Segment {
            start: starts[i],
            end: starts.get(i + 1).copied().unwrap_or(windows),
            rps: l.mean().exp(),
        })
        .collect()
}

/// Optimal partitioning (Jackson et al. 2005) of `pts` into segments of
/// constant mean, minimising the squared error plus `beta` per segment.
fn partition(pts: &[(f64, f64)], beta: f64) -> Vec<Level> {
    let n = pts.len();
    let mut sum = vec![0.0; n + 1];
    let mut sum2 = vec![0.0; n + 1];
    for (i, p) in pts.iter().enumerate() {
        sum[i + 1] = sum[i] + p.1;
        sum2[i + 1] = sum2[i] + p.1 * p.1;
    }
    let cost = |i: usize, j: usize| {
        let s = sum[j] - sum[i];
        (sum2[j] - sum2[i] - s * s / (j - i) as f64).max(0.0)
    };
    let mut best = vec![0.0; n + 1];
    let mut cut = vec![0usize; n + 1];
    for j in 1..=n {
        let (arg, value) = (0..j)
            .map(|i| (i, best[i] + cost(i, j) + beta))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("j >= 1");
        best[j] = value;
        cut[j] = arg;
    }
    let mut bounds = vec![n];
    let mut j = n;
    while j > 0 {
        j = cut[j];
        bounds.push(j);
    }
    bounds.reverse();
    bounds
        .windows(2)
        .map(|w| Level {
            from: w[0],
            to: w[1],
            n: w[1] - w[0],
            sum: sum[w[1]] - sum[w[0]],
        })
        .collect()
}

/// Merges adjacent levels closer than `tolerance`, closest pair first.
fn merge_equivalent(mut levels: Vec<Level>, tolerance: f64) -> Vec<Level> {
    loop {
        let closest = levels
            .windows(2)
            .enumerate()
            .map(|(i, w)| (i, (w[1].mean() - w[0].mean()).abs()))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match closest {
            Some((i, gap)) if gap <= tolerance => {
                let (a, b) = (levels[i], levels[i + 1]);
                levels[i] = Level {
                    from: a.from,
                    to: b.to,
                    n: a.n + b.n,
                    sum: a.sum + b.sum,
                };
                levels.remove(i + 1);
            }
            _ => return levels,
        }
    }
}

/// How many times a sequence of levels turns from rising to falling or
/// back.
fn reversals(means: &[f64]) -> usize {
    let rising: Vec<bool> = means.windows(2).map(|w| w[1] > w[0]).collect();
    rising.windows(2).filter(|w| w[0] != w[1]).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64* with Box–Muller: deterministic noise without a crate.
    struct Rng(u64);

    impl Rng {
        fn new(seed: u64) -> Self {
            Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
        }
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
            ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn between(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.uniform()
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
        /// A window's noise: log-normal, `sigma` ≈ its coefficient of
        /// variation.
        fn noise(&mut self, sigma: f64) -> f64 {
            (sigma * self.normal()).exp()
        }
    }

    /// Window noise between windows measured on the 2-CPU VM.
    const VM_NOISE: f64 = 0.15;
    const WINDOWS: usize = 120;

    fn time(i: usize) -> f64 {
        (i as f64 + 0.5) * 0.5
    }

    /// A native server: one level, 15% noise.
    fn flat(rng: &mut Rng) -> Vec<f64> {
        (0..WINDOWS)
            .map(|_| 50_000.0 * rng.noise(VM_NOISE))
            .collect()
    }

    /// A JIT warm-up: the classic shape, biggest gains first (interpreter to
    /// C1 in the first second, C2 over the next seconds, then a tail): the
    /// log of throughput approaches its plateau exponentially, rising
    /// `ratio` (10–40x) with 95% of the rise done by `rise` (5–30 s).
    /// Returns the noisy curve and each window's true share of the plateau.
    fn jit(rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
        let ratio: f64 = rng.between(10.0, 40.0);
        let tau = rng.between(5.0, 30.0) / 3.0;
        let plateau = 800.0 * ratio;
        let share: Vec<f64> = (0..WINDOWS)
            .map(|i| (-ratio.ln() * (-time(i) / tau).exp()).exp())
            .collect();
        let curve = share
            .iter()
            .map(|s| plateau * s * rng.noise(VM_NOISE))
            .collect();
        (curve, share)
    }

    /// A JIT warm-up shaped as a logistic in requests/s, rising 10–40x with
    /// 10% to 90% of it over `rise` seconds (drawn from the range), a tenth
    /// of the way up at the first window.
    fn jit_logistic(rng: &mut Rng, rise: (f64, f64)) -> (Vec<f64>, Vec<f64>) {
        let ratio: f64 = rng.between(10.0, 40.0);
        let width = rng.between(rise.0, rise.1) / 4.4;
        let midpoint = 2.2 * width;
        let share: Vec<f64> = (0..WINDOWS)
            .map(|i| {
                let f = 1.0 / (1.0 + (-(time(i) - midpoint) / width).exp());
                (1.0 + (ratio - 1.0) * f) / ratio
            })
            .collect();
        let curve = share
            .iter()
            .map(|s| 40_000.0 * s * rng.noise(VM_NOISE))
            .collect();
        (curve, share)
    }

    /// Warms 10x in ~5 s, holds until 20 s, then loses half within 5 s and
    /// stays there (a leak, a cache that stops fitting).
    fn slowdown(rng: &mut Rng) -> Vec<f64> {
        (0..WINDOWS)
            .map(|i| {
                let t = time(i);
                let warm = (-10f64.ln() * (-t / 1.7).exp()).exp();
                let loss = 0.5f64.powf(((t - 20.0) / 5.0).clamp(0.0, 1.0));
                30_000.0 * warm * loss * rng.noise(VM_NOISE)
            })
            .collect()
    }

    /// A level that never stays: it drifts 6–12% per second up or down,
    /// turning after 4–12 s each time, with a random walk of 3% steps per
    /// window on top, under the window noise.
    fn drifting_walk(rng: &mut Rng) -> Vec<f64> {
        let mut level = 20_000f64.ln();
        let mut drift = rng.between(0.03, 0.06);
        let mut turn = rng.between(8.0, 24.0) as usize;
        (0..WINDOWS)
            .map(|i| {
                if i == turn {
                    drift = -drift.signum() * rng.between(0.03, 0.06);
                    turn += rng.between(8.0, 24.0) as usize;
                }
                level += drift + 0.03 * rng.normal();
                level.exp() * rng.noise(VM_NOISE)
            })
            .collect()
    }

    /// Swings between two levels 3x apart every 2 s (full speed, then
    /// collecting garbage).
    fn oscillation(rng: &mut Rng) -> Vec<f64> {
        (0..WINDOWS)
            .map(|i| {
                let high = (i / 4) % 2 == 0;
                (if high { 30_000.0 } else { 10_000.0 }) * rng.noise(VM_NOISE)
            })
            .collect()
    }

    /// Pushes `curve` until the detector stops warming; the decision and the
    /// windows pushed.
    fn run(curve: &[f64]) -> (Decision, usize) {
        let mut d = SteadyDetector::new(SteadyConfig::default());
        for (i, &r) in curve.iter().enumerate() {
            match d.push(r) {
                Decision::KeepWarming => {}
                decision => return (decision, i + 1),
            }
        }
        (d.decision(), curve.len())
    }

    fn settled_at(curve: &[f64]) -> Option<usize> {
        match run(curve).0 {
            Decision::Settled { windows } => Some(windows),
            _ => None,
        }
    }

    fn class_of(curve: &[f64]) -> SteadyClass {
        classify(curve, &SteadyConfig::default()).class
    }

    #[test]
    fn default_config_is_valid() {
        SteadyConfig::default().check().unwrap();
        let bad = SteadyConfig {
            min_windows: 2,
            ..SteadyConfig::default()
        };
        assert!(bad.check().unwrap_err().contains("min_windows"));
        let bad = SteadyConfig {
            equivalence: f64::NAN,
            ..SteadyConfig::default()
        };
        assert!(bad.check().unwrap_err().contains("equivalence"));
    }

    #[test]
    fn a_flat_noisy_curve_settles_within_a_few_windows() {
        let curve = flat(&mut Rng::new(1));
        let at = settled_at(&curve).expect("a flat curve settles");
        assert!(at <= 10, "settled after {at} windows");
        let state = classify(&curve, &SteadyConfig::default());
        assert_eq!(state.class, SteadyClass::Flat, "{state:?}");
        assert_eq!(state.time_to_steady, Some(Duration::ZERO));
        let level = state.steady_rps.unwrap();
        assert!((level / 50_000.0 - 1.0).abs() < 0.05, "level {level}");
        assert!(
            (state.noise - VM_NOISE).abs() < 0.05,
            "noise {}",
            state.noise
        );
    }

    /// The false-positive check of issue 28: flat curves at the VM's noise
    /// must not be held warming. Over 1,000 seeds, the share settled within
    /// 16 windows (8 s) must be at least 99%.
    #[test]
    fn flat_noisy_curves_settle_within_16_windows_in_99_percent() {
        let trials = 1000;
        let mut at: Vec<usize> = (0..trials)
            .map(|seed| settled_at(&flat(&mut Rng::new(seed))).unwrap_or(usize::MAX))
            .collect();
        at.sort_unstable();
        let within = at.iter().filter(|&&n| n <= 16).count();
        eprintln!(
            "flat: settled within 16 windows in {within}/{trials}; median {} windows, 99th percentile {}",
            at[trials as usize / 2],
            at[trials as usize * 99 / 100]
        );
        assert!(within * 100 >= 99 * trials as usize, "{within}/{trials}");
    }

    #[test]
    fn flat_noisy_curves_classify_as_flat() {
        let trials = 200;
        let flat_count = (0..trials)
            .filter(|&seed| class_of(&flat(&mut Rng::new(10_000 + seed))) == SteadyClass::Flat)
            .count();
        eprintln!("flat: classified flat in {flat_count}/{trials}");
        assert!(
            flat_count * 100 >= 95 * trials as usize,
            "{flat_count}/{trials}"
        );
    }

    /// The shares of the plateau at which the detector settled, over 200
    /// seeds, sorted (1.0 where it never settled).
    fn settling_shares(generate: impl Fn(&mut Rng) -> (Vec<f64>, Vec<f64>)) -> Vec<f64> {
        let mut shares: Vec<f64> = (0..200)
            .map(|seed| {
                let (curve, share) = generate(&mut Rng::new(20_000 + seed));
                settled_at(&curve).map_or(1.0, |n| share[n - 1])
            })
            .collect();
        shares.sort_by(f64::total_cmp);
        eprintln!(
            "share of the plateau at settling: min {:.2}, 5th percentile {:.2}, median {:.2}; >= 85% in {}/200",
            shares[0],
            shares[10],
            shares[100],
            shares.iter().filter(|&&s| s >= 0.85).count()
        );
        shares
    }

    /// A JIT curve (10–40x over 5–30 s, biggest gains first) must keep
    /// warming until it is close to its plateau: the level where the
    /// detector settles is at least 85% of the plateau in 95% of 200 seeds,
    /// and never below half of it.
    #[test]
    fn a_jit_curve_keeps_warming_until_near_its_plateau() {
        let shares = settling_shares(jit);
        assert!(shares[10] >= 0.85, "5th percentile {:.2}", shares[10]);
        assert!(shares[0] >= 0.5, "settled at {:.2}", shares[0]);
    }

    /// The same for an S-shaped climb over 5–15 s. Over 15–30 s an S-shaped
    /// climb gains under 10% per second at its start, under the noise of
    /// three windows: the detector settles on the flat start in ~20% of
    /// seeds (printed here, not asserted): the limit the module
    /// documentation names.
    #[test]
    fn an_s_shaped_jit_curve_keeps_warming_until_near_its_plateau() {
        let shares = settling_shares(|rng| jit_logistic(rng, (5.0, 15.0)));
        assert!(shares[10] >= 0.85, "5th percentile {:.2}", shares[10]);
        settling_shares(|rng| jit_logistic(rng, (15.0, 30.0)));
    }

    #[test]
    fn a_jit_curve_classifies_as_warmed_with_its_time_to_steady() {
        let (curve, share) = jit(&mut Rng::new(7));
        let state = classify(&curve, &SteadyConfig::default());
        assert_eq!(state.class, SteadyClass::Warmed, "{state:?}");
        let from = state.steady_from.unwrap();
        // The steady segment starts where the curve is within its noise of
        // the plateau, not during the climb.
        assert!(
            share[from] > 0.7,
            "steady from window {from} at {:.2}",
            share[from]
        );
        assert_eq!(
            state.time_to_steady,
            Some(Duration::from_millis(500) * from as u32)
        );
        assert!(state.segments.len() >= 2);
        assert!(state.segments.windows(2).all(|w| w[0].rps < w[1].rps));
    }

    #[test]
    fn a_rise_then_a_fall_is_a_slowdown() {
        for seed in 0..20 {
            let curve = slowdown(&mut Rng::new(30_000 + seed));
            let state = classify(&curve, &SteadyConfig::default());
            assert_eq!(state.class, SteadyClass::Slowdown, "seed {seed}: {state:?}");
            // Steady from the end of the fall (20–25 s, windows 40–50).
            let from = state.steady_from.unwrap();
            assert!((40..=55).contains(&from), "seed {seed}: steady from {from}");
        }
    }

    /// A curve that keeps drifting is no steady state over the whole run.
    /// Online, the detector usually settles on one of its turns, where it
    /// is locally flat for a few seconds (the rate is printed): no rule
    /// reading the last seconds can tell a turn from a plateau; the whole
    /// curve can.
    #[test]
    fn a_drifting_walk_has_no_steady_state() {
        let trials = 100;
        let (mut capped, mut none) = (0, 0);
        for seed in 0..trials {
            let curve = drifting_walk(&mut Rng::new(40_000 + seed));
            capped += usize::from(run(&curve).0 == Decision::CapReached);
            none += usize::from(class_of(&curve) == SteadyClass::NoSteadyState);
        }
        eprintln!("drifting walk: cap reached {capped}/{trials}, no steady state {none}/{trials}");
        assert!(none * 100 >= 90 * trials as usize, "{none}/{trials}");
    }

    #[test]
    fn an_oscillation_reaches_the_cap_with_no_steady_state() {
        for seed in 0..20 {
            let curve = oscillation(&mut Rng::new(50_000 + seed));
            assert_eq!(run(&curve).0, Decision::CapReached, "seed {seed}");
            assert_eq!(class_of(&curve), SteadyClass::NoSteadyState, "seed {seed}");
        }
    }

    /// The limit the module documentation names: flat for 10 s, then a 10x
    /// climb. Online it looks flat and settles; afterwards `classify` shows
    /// the steady state began after the settle point.
    #[test]
    fn a_late_climb_is_seen_afterwards() {
        let mut rng = Rng::new(60_000);
        let curve: Vec<f64> = (0..WINDOWS)
            .map(|i| {
                let t = time(i);
                let climb = if t < 10.0 {
                    1.0
                } else {
                    10f64.powf(1.0 - (-(t - 10.0) / 2.0).exp())
                };
                2_000.0 * climb * rng.noise(VM_NOISE)
            })
            .collect();
        let at = settled_at(&curve).expect("the flat start settles");
        let state = classify(&curve, &SteadyConfig::default());
        assert_eq!(state.class, SteadyClass::Warmed, "{state:?}");
        assert!(state.steady_from.unwrap() > at, "{state:?} settled at {at}");
    }

    #[test]
    fn decisions_are_sticky() {
        let mut d = SteadyDetector::new(SteadyConfig::default());
        for _ in 0..6 {
            d.push(1000.0);
        }
        assert_eq!(d.decision(), Decision::Settled { windows: 6 });
        assert_eq!(d.push(1.0), Decision::Settled { windows: 6 });
        assert_eq!(d.curve().len(), 7);
        assert_eq!(d.elapsed(), Duration::from_millis(3500));

        let cfg = SteadyConfig {
            cap: 8,
            ..SteadyConfig::default()
        };
        let mut d = SteadyDetector::new(cfg);
        let decisions: Vec<Decision> = (0..10).map(|i| d.push(1000.0 * 2f64.powi(i))).collect();
        assert!(decisions[..7].iter().all(|&x| x == Decision::KeepWarming));
        assert!(decisions[7..].iter().all(|&x| x == Decision::CapReached));
    }

    #[test]
    fn edge_cases_do_not_panic() {
        let cfg = SteadyConfig::default();
        // Nothing, one window, too few windows: no judgement.
        for curve in [&[][..], &[1000.0], &[1000.0; 5]] {
            let state = classify(curve, &cfg);
            assert_eq!(state.class, SteadyClass::NoSteadyState);
            assert_eq!(state.time_to_steady, None);
        }
        let mut d = SteadyDetector::new(cfg);
        assert_eq!(d.push(1000.0), Decision::KeepWarming);

        // A server that answers nothing is steadily at zero.
        let zeros = [0.0; 20];
        assert_eq!(settled_at(&zeros), Some(6));
        let state = classify(&zeros, &cfg);
        assert_eq!(state.class, SteadyClass::Flat);
        assert_eq!(state.steady_rps, Some(1.0));

        // Holes (NaN, infinities, negatives) are skipped but count as time.
        let mut rng = Rng::new(70_000);
        let holey: Vec<f64> = (0..40)
            .map(|i| match i % 7 {
                3 => f64::NAN,
                5 => f64::INFINITY,
                6 if i > 30 => -1.0,
                _ => 50_000.0 * rng.noise(VM_NOISE),
            })
            .collect();
        assert!(settled_at(&holey).is_some());
        assert_eq!(class_of(&holey), SteadyClass::Flat);
        let all_nan = [f64::NAN; 30];
        assert_eq!(run(&all_nan).0, Decision::KeepWarming);
        assert_eq!(class_of(&all_nan), SteadyClass::NoSteadyState);

        // One stalled window in a flat curve is not a change of level.
        let mut stalled = flat(&mut Rng::new(70_001));
        stalled[60] = 0.0;
        assert_eq!(class_of(&stalled), SteadyClass::Flat);
    }

    #[test]
    fn trend_statistics_on_known_inputs() {
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 3.0, 4.0, 5.0]
            .iter()
            .enumerate()
            .map(|(i, &y)| (i as f64, y))
            .collect();
        assert!((theil_sen(&pts) - 1.0).abs() < 1e-12);
        // S = 10, var = 5·4·15/18 = 16.67: Z = 9 / 4.082.
        assert!((mann_kendall_z(&pts) - 9.0 / (50.0f64 / 3.0).sqrt()).abs() < 1e-9);
        let mut outlier = pts.clone();
        outlier[2].1 = 100.0;
        assert!(
            (theil_sen(&outlier) - 1.0).abs() < 1e-12,
            "one outlier moves the median slope"
        );
        assert_eq!(mann_kendall_z(&[(0.0, 1.0), (1.0, 1.0), (2.0, 1.0)]), 0.0);
    }
}
