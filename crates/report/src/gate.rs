//! The regression gate's rules: `--fail-on 'rps<-5%,p99>+10%'` parsed into
//! typed rules, with errors that say how to write them. Pure: no I/O, so
//! the command line can refuse a typo before any store is opened.
//! Judging a comparison by the rules is `gate_judge`.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::compare::Metric;

/// The names a rule may give each metric: a short one, and the key the
/// comparison's JSON uses ([`Metric::key`]). In [`Metric::ALL`]'s order.
pub const METRIC_NAMES: [(&str, Metric); 7] = [
    ("rps", Metric::RequestsPerS),
    ("p99", Metric::LatencyP99),
    ("idle_mem", Metric::IdleBytesPerConnection),
    ("idle_cpu", Metric::IdleCpuCores),
    ("storm", Metric::StormAllDone),
    ("knee", Metric::SweepKnee),
    ("cpu_per_req", Metric::FixedRateCpuPerRequest),
];

/// The short name of `metric` in rules.
pub fn metric_name(metric: Metric) -> &'static str {
    METRIC_NAMES
        .iter()
        .find(|(_, m)| *m == metric)
        .map_or("?", |(n, _)| n)
}

/// Which way a rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// `<`: fails when the change is below the threshold (a fall).
    Below,
    /// `>`: fails when the change is above the threshold (a rise).
    Above,
}

/// One rule: fail when `metric` changed beyond `threshold` in `direction`
/// (and beyond noise: that part is the judge's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateRule {
    pub metric: Metric,
    pub direction: Direction,
    /// A fraction: -0.05 for `-5%`. Below zero for `<`, above for `>`,
    /// or zero for either; above -1 (nothing falls by all of itself).
    pub threshold: f64,
    /// The rule as written, without spaces: what messages quote.
    pub text: String,
}

impl GateRule {
    /// Whether `change` (B / A - 1) is beyond this rule's threshold.
    pub fn beyond(&self, change: f64) -> bool {
        match self.direction {
            Direction::Below => change < self.threshold,
            Direction::Above => change > self.threshold,
        }
    }

    /// Whether this rule fails on a change compare calls better (a rise of
    /// throughput, a fall of latency): allowed, to catch a change too good
    /// to be true, but not a regression, and the gate says so.
    pub fn flags_improvement(&self) -> bool {
        (self.direction == Direction::Above) == self.metric.higher_is_better()
    }
}

impl fmt::Display for GateRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Every rule of one `--fail-on`, in the order given.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct GateRules(pub Vec<GateRule>);

impl fmt::Display for GateRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let texts: Vec<&str> = self.0.iter().map(|r| r.text.as_str()).collect();
        f.write_str(&texts.join(","))
    }
}

/// Why `--fail-on` could not be read; each message shows how to write it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GateSyntaxError {
    /// Nothing but spaces and commas.
    #[error("no rule given; write rules such as 'rps<-5%,p99>+10%' (METRIC then < or > then a signed percent)")]
    Empty,
    /// Two commas in a row, or one at either end.
    #[error("rule {position} is empty (two commas in a row, or one at an end) in `{rules}`; separate rules with one comma, such as 'rps<-5%,p99>+10%'")]
    EmptyRule { position: usize, rules: String },
    /// Neither `<` nor `>` in the rule.
    #[error("`{rule}` has no `<` or `>`; write METRIC<-PERCENT% to fail on a fall or METRIC>+PERCENT% to fail on a rise, such as rps<-5% or p99>+10%")]
    NoOperator { rule: String },
    /// `<=` or `>=`: the threshold is already exclusive and noise decides
    /// the rest.
    #[error("`{rule}`: write `{op}` alone, without `=`, such as `{suggestion}`; a change exactly at the threshold does not fail")]
    OrEqual {
        rule: String,
        op: char,
        suggestion: String,
    },
    /// Nothing before the operator.
    #[error("`{rule}` names no metric before `{op}`; one of: {valid}")]
    NoMetric {
        rule: String,
        op: char,
        valid: String,
    },
    /// A metric the comparison does not have.
    #[error("`{name}` in `{rule}` is not a metric compare knows; use one of: {valid}")]
    UnknownMetric {
        rule: String,
        name: String,
        valid: String,
    },
    /// The threshold lacks its `%`.
    #[error("the threshold of `{rule}` is not a percent; end it with %, such as `{suggestion}`")]
    MissingPercent { rule: String, suggestion: String },
    /// The threshold is not a plain decimal number.
    #[error("`{number}` in `{rule}` is not a number; write a signed decimal percent, such as -5% or +2.5%")]
    BadNumber { rule: String, number: String },
    /// A threshold other than zero without its sign.
    #[error("the threshold of `{rule}` has no sign; write `{suggestion}` (a `<` rule fails on a fall, so its threshold is negative; a `>` rule's is positive)")]
    MissingSign { rule: String, suggestion: String },
    /// `rps<+5%` or `p99>-10%`: a threshold on the other side of zero
    /// would fail rows that barely moved or moved the other way.
    #[error("`{rule}` would fail a row that {what}; a `{op}` rule's threshold is {side}: write `{suggestion}`")]
    WrongSide {
        rule: String,
        op: char,
        what: String,
        side: &'static str,
        suggestion: String,
    },
    /// A fall of 100% or more: a figure cannot go below zero.
    #[error("`{rule}` can never fail: no figure falls by 100% or more; give a threshold above -100%, such as -50%")]
    Impossible { rule: String },
    /// More than two decimals: finer than any benchmark measures, and
    /// `rps<-99.99999999999%` is a fall only a figure of zero reaches.
    #[error("the threshold of `{rule}` is finer than 0.01%, which no measurement resolves (a fall that close to 100% never happens before the figure is zero); give at most two decimals, such as `{suggestion}`")]
    TooPrecise { rule: String, suggestion: String },
    /// Beyond ±1,000,000%: a 400-digit threshold read as infinity, a rule
    /// that could never fire.
    #[error("the threshold of `{rule}` is beyond {MAX_THRESHOLD_PERCENT}%: no figure moves that much, so the rule could never fail; give a smaller one, such as +100%")]
    TooLarge { rule: String },
    /// The same metric and direction twice.
    #[error("`{first}` and `{second}` judge the same metric in the same direction; keep one")]
    Duplicate { first: String, second: String },
}

/// The valid metric names, for messages and `--help`: `rps (requests/s),
/// p99 (p99 latency), ...`.
pub fn valid_names() -> String {
    METRIC_NAMES
        .iter()
        .map(|(n, m)| format!("{n} or {}", m.key()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for GateRules {
    type Err = GateSyntaxError;

    /// `RULES := RULE (',' RULE)*`, `RULE := METRIC ('<' | '>') PERCENT`,
    /// `PERCENT := ('+' | '-') DECIMAL '%'` (the sign may be left out of a
    /// zero); spaces around the parts are ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.split(',').all(|r| r.trim().is_empty()) {
            return Err(GateSyntaxError::Empty);
        }
        let mut rules: Vec<GateRule> = Vec::new();
        for (i, part) in s.split(',').enumerate() {
            let rule = parse_rule(part).map_err(|e| match e {
                RuleError::Empty => GateSyntaxError::EmptyRule {
                    position: i + 1,
                    rules: s.trim().to_string(),
                },
                RuleError::Syntax(e) => e,
            })?;
            if let Some(first) = rules
                .iter()
                .find(|r| r.metric == rule.metric && r.direction == rule.direction)
            {
                return Err(GateSyntaxError::Duplicate {
                    first: first.text.clone(),
                    second: rule.text,
                });
            }
            rules.push(rule);
        }
        Ok(GateRules(rules))
    }
}

enum RuleError {
    Empty,
    Syntax(GateSyntaxError),
}

impl From<GateSyntaxError> for RuleError {
    fn from(e: GateSyntaxError) -> Self {
        RuleError::Syntax(e)
    }
}

/// The largest threshold, in percent: a figure 10,000 times another.
const MAX_THRESHOLD_PERCENT: u32 = 1_000_000;

fn parse_rule(part: &str) -> Result<GateRule, RuleError> {
    let text: String = part.chars().filter(|c| !c.is_whitespace()).collect();
    if text.is_empty() {
        return Err(RuleError::Empty);
    }
    let Some(at) = text.find(['<', '>']) else {
        return Err(GateSyntaxError::NoOperator { rule: text }.into());
    };
    let (name, rest) = text.split_at(at);
    let op = if rest.starts_with('<') { '<' } else { '>' };
    let number = &rest[1..];
    let direction = if op == '<' {
        Direction::Below
    } else {
        Direction::Above
    };
    // What the rule probably meant, for the messages: the same magnitude
    // on the side the operator implies.
    let magnitude = number
        .trim_start_matches(['=', '+', '-'])
        .trim_end_matches('%');
    let sign = if op == '<' { '-' } else { '+' };
    let suggestion = |name: &str| format!("{name}{op}{sign}{magnitude}%");
    if number.starts_with('=') {
        return Err(GateSyntaxError::OrEqual {
            suggestion: suggestion(name),
            rule: text,
            op,
        }
        .into());
    }
    if name.is_empty() {
        return Err(GateSyntaxError::NoMetric {
            rule: text,
            op,
            valid: valid_names(),
        }
        .into());
    }
    let lower = name.to_ascii_lowercase();
    let Some(metric) = METRIC_NAMES
        .iter()
        .find(|(n, m)| *n == lower || m.key() == lower)
        .map(|(_, m)| *m)
    else {
        return Err(GateSyntaxError::UnknownMetric {
            name: name.to_string(),
            rule: text,
            valid: valid_names(),
        }
        .into());
    };
    let Some(signed) = number.strip_suffix('%') else {
        return Err(GateSyntaxError::MissingPercent {
            suggestion: suggestion(name),
            rule: text,
        }
        .into());
    };
    let (negative, digits) = match signed.as_bytes().first() {
        Some(b'-') => (Some(true), &signed[1..]),
        Some(b'+') => (Some(false), &signed[1..]),
        _ => (None, signed),
    };
    // Plain decimals only: f64's parser would also take `inf`, `NaN` and
    // `1e3`, none of which is a threshold anyone means.
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && digits.bytes().any(|b| b.is_ascii_digit());
    let value: f64 = match digits.parse() {
        Ok(v) if plain => v,
        _ => {
            return Err(GateSyntaxError::BadNumber {
                number: signed.to_string(),
                rule: text,
            }
            .into())
        }
    };
    if !value.is_finite() || value > f64::from(MAX_THRESHOLD_PERCENT) {
        return Err(GateSyntaxError::TooLarge { rule: text }.into());
    }
    if digits.split_once('.').is_some_and(|(_, d)| d.len() > 2) {
        // Cut toward zero: rounding -99.999% up would suggest -100.00%.
        let rounded = format!("{name}{op}{sign}{:.2}%", (value * 100.0).floor() / 100.0);
        return Err(GateSyntaxError::TooPrecise {
            rule: text,
            suggestion: rounded,
        }
        .into());
    }
    let threshold = match negative {
        Some(true) => -value / 100.0,
        Some(false) => value / 100.0,
        None if value == 0.0 => 0.0,
        None => {
            return Err(GateSyntaxError::MissingSign {
                suggestion: suggestion(name),
                rule: text,
            }
            .into())
        }
    };
    let wrong_side = match direction {
        Direction::Below => threshold > 0.0,
        Direction::Above => threshold < 0.0,
    };
    if wrong_side {
        let (what, side) = match direction {
            Direction::Below => (
                format!("did not rise by {magnitude}% (no change at all included)"),
                "a fall, below zero",
            ),
            Direction::Above => (
                format!("did not fall by {magnitude}% (no change at all included)"),
                "a rise, above zero",
            ),
        };
        return Err(GateSyntaxError::WrongSide {
            suggestion: suggestion(name),
            rule: text,
            op,
            what,
            side,
        }
        .into());
    }
    if threshold <= -1.0 {
        return Err(GateSyntaxError::Impossible { rule: text }.into());
    }
    Ok(GateRule {
        metric,
        direction,
        threshold,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<GateRules, GateSyntaxError> {
        s.parse()
    }

    fn message(s: &str) -> String {
        parse(s).expect_err(s).to_string()
    }

    #[test]
    fn the_issue_example_reads_as_two_rules() {
        let r = parse("rps<-5%,p99>+10%").unwrap();
        assert_eq!(r.0.len(), 2);
        assert_eq!(r.0[0].metric, Metric::RequestsPerS);
        assert_eq!(r.0[0].direction, Direction::Below);
        assert!((r.0[0].threshold + 0.05).abs() < 1e-12);
        assert_eq!(r.0[1].metric, Metric::LatencyP99);
        assert_eq!(r.0[1].direction, Direction::Above);
        assert!((r.0[1].threshold - 0.10).abs() < 1e-12);
        assert_eq!(r.to_string(), "rps<-5%,p99>+10%");
    }

    #[test]
    fn spaces_long_names_case_and_decimals_are_taken() {
        let r = parse(" requests_per_s < -2.5 % , P99>+0.5%,knee<0%").unwrap();
        assert_eq!(r.to_string(), "requests_per_s<-2.5%,P99>+0.5%,knee<0%");
        assert!((r.0[0].threshold + 0.025).abs() < 1e-12);
        assert_eq!(r.0[1].metric, Metric::LatencyP99);
        assert_eq!(r.0[2].metric, Metric::SweepKnee);
        assert_eq!(r.0[2].threshold, 0.0);
    }

    #[test]
    fn every_metric_has_a_name_and_its_key() {
        for m in Metric::ALL {
            let short = metric_name(m);
            assert_ne!(short, "?", "{m:?}");
            let sign = if m.higher_is_better() { "<-1%" } else { ">+1%" };
            assert_eq!(parse(&format!("{short}{sign}")).unwrap().0[0].metric, m);
            assert_eq!(parse(&format!("{}{sign}", m.key())).unwrap().0[0].metric, m);
        }
    }

    #[test]
    fn beyond_is_strict_and_looks_one_way() {
        let r = parse("rps<-5%,p99>+10%").unwrap();
        assert!(r.0[0].beyond(-0.2));
        assert!(!r.0[0].beyond(-0.05), "at the threshold is not beyond");
        assert!(!r.0[0].beyond(0.3), "a rise is not a fall");
        assert!(r.0[1].beyond(0.11));
        assert!(!r.0[1].beyond(-0.5));
    }

    #[test]
    fn a_rule_on_an_improvement_is_allowed_and_known_as_such() {
        let r = parse("rps>+50%,p99<-30%,rps<-5%,p99>+10%").unwrap();
        let flags: Vec<bool> = r.0.iter().map(GateRule::flags_improvement).collect();
        assert_eq!(flags, [true, true, false, false]);
    }

    #[test]
    fn an_unknown_metric_names_the_valid_ones() {
        let m = message("rsp<-5%");
        assert!(m.contains("`rsp`"), "{m}");
        for (name, _) in METRIC_NAMES {
            assert!(m.contains(name), "{m}");
        }
        assert!(m.contains("requests_per_s"), "{m}");
    }

    #[test]
    fn each_mistake_says_how_to_write_it() {
        let huge = format!("p99>+{}%", "9".repeat(400));
        let cases = [
            ("", "no rule given"),
            (" , ", "no rule given"),
            ("rps<-5%,", "rule 2 is empty"),
            ("rps<-5%,,p99>+1%", "rule 2 is empty"),
            ("rps-5%", "no `<` or `>`"),
            ("rps=-5%", "no `<` or `>`"),
            (
                "rps<=-5%",
                "write `<` alone, without `=`, such as `rps<-5%`",
            ),
            ("<-5%", "names no metric"),
            ("rps<-5", "end it with %, such as `rps<-5%`"),
            ("p99>10", "end it with %, such as `p99>+10%`"),
            ("rps<5%", "has no sign; write `rps<-5%`"),
            ("p99>10%", "has no sign; write `p99>+10%`"),
            ("rps<+5%", "did not rise by 5%"),
            ("rps<+5%", "write `rps<-5%`"),
            ("p99>-10%", "write `p99>+10%`"),
            ("rps<-abc%", "`-abc` in `rps<-abc%` is not a number"),
            ("rps<-inf%", "not a number"),
            ("rps<-1e3%", "not a number"),
            ("rps<-%", "not a number"),
            ("rps<-.%", "not a number"),
            ("rps<-100%", "can never fail"),
            // Issue 42 (low): a fall only zero reaches, and infinity.
            ("rps<-99.99999999999%", "finer than 0.01%"),
            ("rps<-99.99999999999%", "such as `rps<-99.99%`"),
            ("p99>+2.555%", "at most two decimals"),
            (huge.as_str(), "could never fail"),
            ("p99>+1000001%", "beyond 1000000%"),
            (
                "rps<-5%,rps<-10%",
                "`rps<-5%` and `rps<-10%` judge the same metric",
            ),
        ];
        for (input, says) in cases {
            let m = message(input);
            assert!(m.contains(says), "{input:?}: {m}");
        }
        // Both directions of one metric are two rules, not a duplicate.
        assert!(parse("rps<-5%,rps>+50%").is_ok());
    }
}
