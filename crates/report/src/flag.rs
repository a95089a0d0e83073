//! The marks that qualify a cell's number (C client-bound, ~ noisy, E errors,
//! F a repetition failed, L loaded from outside, W verify warnings; P pipelined and K short-lived,
//! which say what kind of throughput row it is): each one's letter, hover text
//! and legend wording live here only, so the terminal table, Markdown, the
//! HTML tables and the charts cannot drift apart on what a mark means.

use serde_json::{Map, Value};

/// One mark a cell's number can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// The client was the bottleneck in at least one repetition.
    ClientBound,
    /// The cell's own repetitions spread too much to use (CV above
    /// [`crate::stats::NOISY_CV`], 25%): it gets no tier.
    Noisy,
    /// The measurement saw errors.
    Errors,
    /// At least one repetition failed.
    Failed,
    /// Other processes on the machine kept [`LOADED_CORES`] or more busy
    /// during a repetition: the number shares the CPUs with them.
    Loaded,
    /// A pipelined row: a reference figure, not a throughput to rank against
    /// the others (browsers and proxies do not pipeline).
    Pipelined,
    /// A short-lived row: a new connection every K requests.
    ShortLived,
    /// The server passed verify with warnings. A property of the server,
    /// not of the measurement: the stored run's table (`netbench show`)
    /// does not show it, the reports do.
    VerifyWarnings,
}

impl Flag {
    /// The flags a cell's measurements can set, in the order their marks
    /// are written.
    pub const MEASURED: [Flag; 5] = [
        Flag::ClientBound,
        Flag::Noisy,
        Flag::Errors,
        Flag::Failed,
        Flag::Loaded,
    ];

    /// The flags that say which kind of throughput row a cell is in.
    pub const KIND: [Flag; 2] = [Flag::Pipelined, Flag::ShortLived];

    /// Every flag, in the order marks are written (W after the others).
    pub const ALL: [Flag; 8] = [
        Flag::ClientBound,
        Flag::Noisy,
        Flag::Errors,
        Flag::Failed,
        Flag::Loaded,
        Flag::Pipelined,
        Flag::ShortLived,
        Flag::VerifyWarnings,
    ];

    /// The mark, as tables and the report JSON write it.
    pub fn letter(self) -> char {
        match self {
            Flag::ClientBound => 'C',
            Flag::Noisy => '~',
            Flag::Errors => 'E',
            Flag::Failed => 'F',
            Flag::Loaded => 'L',
            Flag::Pipelined => 'P',
            Flag::ShortLived => 'K',
            Flag::VerifyWarnings => 'W',
        }
    }

    /// The flag a mark stands for.
    pub fn from_letter(letter: char) -> Option<Flag> {
        Flag::ALL.into_iter().find(|f| f.letter() == letter)
    }

    /// The hover text on a mark, in the HTML tables and chart tooltips.
    pub fn title(self) -> &'static str {
        match self {
            Flag::ClientBound => {
                "client-bound: the client, not the server, may have been the limit"
            }
            Flag::Noisy => {
                "noisy: the repetitions spread more than 25% (CV), too noisy to use; no tier"
            }
            Flag::Errors => "errors: failed checks, timeouts, refused or broken connections",
            Flag::Failed => "a repetition failed",
            Flag::Loaded => {
                "loaded: other processes kept half a core or more busy during a repetition"
            }
            Flag::Pipelined => {
                "pipelined: a reference figure only; browsers and proxies do not pipeline"
            }
            Flag::ShortLived => {
                "short-lived: a new connection every K requests (K = 1: keep-alive off)"
            }
            Flag::VerifyWarnings => "the server passed verification with warnings",
        }
    }

    /// What the mark means in a table's legend, after the letter.
    pub fn legend(self) -> &'static str {
        match self {
            Flag::ClientBound => {
                "client-bound in a repetition (the number may be the client's limit)"
            }
            Flag::Noisy => "too noisy to use, no tier (CV > 25%)",
            Flag::Errors => "errors (failed checks, timeouts, refused or broken connections)",
            Flag::Failed => "a repetition failed",
            Flag::Loaded => "other processes kept half a core or more busy during a repetition",
            Flag::Pipelined => {
                "pipelined, a reference figure only (browsers and proxies do not pipeline)"
            }
            Flag::ShortLived => "short-lived, a new connection every K requests",
            Flag::VerifyWarnings => "the server passed verification with warnings",
        }
    }

    /// A few words for the mark, for a one-line key (the comparison's).
    pub fn short(self) -> &'static str {
        match self {
            Flag::ClientBound => "client-bound",
            Flag::Noisy => "noisy",
            Flag::Errors => "errors",
            Flag::Failed => "a repetition failed",
            Flag::Loaded => "loaded from outside",
            Flag::Pipelined => "pipelined (reference only)",
            Flag::ShortLived => "short-lived",
            Flag::VerifyWarnings => "verified with warnings",
        }
    }

    /// `C client-bound in a repetition (…)`: the letter and its legend.
    fn legend_entry(self) -> String {
        format!("{} {}", self.letter(), self.legend())
    }
}

/// Cores kept busy by other processes during a repetition from which its
/// cell is marked [`Flag::Loaded`]: twice the runner's quiet threshold
/// (`netbench_records::noise::QUIET_THRESHOLD_CORES`), so a cell that started
/// quiet and then shared its CPUs with half a core of something else says so.
pub const LOADED_CORES: f64 = 2.0 * netbench_records::noise::QUIET_THRESHOLD_CORES;

/// The legend of the measured flags, under every table of a stored run.
pub(crate) fn measured_legend() -> String {
    let entries: Vec<String> = Flag::MEASURED.iter().map(|f| f.legend_entry()).collect();
    format!("flags: {}.", entries.join(", "))
}

/// The legend of the kind marks, for a table that has such rows (None
/// when it has none, so the usual legend stays as it was).
pub(crate) fn kind_legend(flags: &[&str]) -> Option<String> {
    let used: Vec<String> = Flag::KIND
        .iter()
        .filter(|f| flags.iter().any(|s| s.contains(f.letter())))
        .map(|f| f.legend_entry())
        .collect();
    (!used.is_empty()).then(|| format!("rows: {}.", used.join(", ")))
}

/// The legend of the verify-warning flag, which the reports add to
/// [`measured_legend`].
pub(crate) fn warnings_legend() -> String {
    format!("{}.", Flag::VerifyWarnings.legend_entry())
}

/// Every flag as `C client-bound`, comma-separated, for a one-line key.
pub(crate) fn short_key() -> String {
    let entries: Vec<String> = Flag::ALL
        .iter()
        .map(|f| format!("{} {}", f.letter(), f.short()))
        .collect();
    entries.join(", ")
}

/// Each letter's hover text, for the charts the browser draws (the page
/// carries it as JSON beside the report data, whose schema stays as it is).
pub(crate) fn titles_json() -> Value {
    let titles: Map<String, Value> = Flag::ALL
        .iter()
        .map(|f| (f.letter().to_string(), f.title().into()))
        .collect();
    Value::Object(titles)
}

/// A string of marks as it is written: `C~`, `FW`.
pub(crate) fn marks(flags: impl IntoIterator<Item = Flag>) -> String {
    flags.into_iter().map(Flag::letter).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legends_read_as_they_always_have() {
        assert_eq!(
            measured_legend(),
            "flags: C client-bound in a repetition (the number may be the client's limit), ~ too \
             noisy to use, no tier (CV > 25%), E errors (failed checks, timeouts, refused or broken \
             connections), F a repetition failed, L other processes kept half a core or more \
             busy during a repetition."
        );
        assert_eq!(
            warnings_legend(),
            "W the server passed verification with warnings."
        );
        assert_eq!(
            short_key(),
            "C client-bound, ~ noisy, E errors, F a repetition failed, L loaded from outside, P \
             pipelined (reference only), K short-lived, W verified with warnings"
        );
        assert_eq!(kind_legend(&["C", "~"]), None);
        assert_eq!(
            kind_legend(&["P", ""]).unwrap(),
            "rows: P pipelined, a reference figure only (browsers and proxies do not pipeline)."
        );
    }

    #[test]
    fn letters_are_distinct_and_round_trip() {
        for f in Flag::ALL {
            assert_eq!(Flag::from_letter(f.letter()), Some(f));
        }
        assert_eq!(Flag::from_letter('X'), None);
        assert_eq!(marks(Flag::ALL), "C~EFLPKW");
        assert_eq!(marks(Flag::MEASURED), "C~EFL");
    }

    #[test]
    fn titles_for_the_charts() {
        let json = titles_json();
        let letters: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(letters, ["C", "~", "E", "F", "L", "P", "K", "W"]);
        assert_eq!(json["F"], "a repetition failed");
    }
}
