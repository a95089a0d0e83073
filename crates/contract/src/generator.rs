//! Distinct, valid work requests from a seed, each with its expected answer,
//! so a server that caches or cans its answers fails every check and load
//! run that uses them.

use serde_json::{json, Value};

use crate::rng::SplitMix64;
use crate::timefmt::format_iso_millis;
use crate::work::answer;

pub const DEFAULT_DATES: usize = 10;

/// 2000-01-01 and 2030-12-31 in ms: the range dates are drawn from.
const FIRST_MS: i64 = 946_684_800_000;
const LAST_MS: i64 = 1_924_905_600_000;

const PRODUCTS: [&str; 8] = [
    "Widget",
    "Gadget",
    "Sprocket",
    "Gizmo",
    "Doohickey",
    "Flange",
    "Bracket",
    "Valve",
];
const KINDS: [&str; 4] = ["retail", "wholesale", "internal", "partner"];

/// One generated request: the body to send and the answer it must get.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkCase {
    pub body: Vec<u8>,
    pub expected: Value,
}

#[derive(Debug, Clone)]
pub struct WorkGenerator {
    rng: SplitMix64,
    dates: usize,
    last_ids: Option<(String, String)>,
}

impl WorkGenerator {
    /// `dates` per document, at least one.
    pub fn new(seed: u64, dates: usize) -> Self {
        WorkGenerator {
            rng: SplitMix64::new(seed),
            dates: dates.max(1),
            last_ids: None,
        }
    }

    /// The next document. Every fourth one reuses the previous document's
    /// product and requestId with new dates, so a server that caches answers
    /// by id answers it wrong.
    pub fn next_case(&mut self) -> WorkCase {
        let rng = &mut self.rng;
        let ids = match self.last_ids.take() {
            Some(ids) if rng.chance(4) => ids,
            _ => (
                format!("{}-{}", rng.pick(&PRODUCTS), rng.below(10_000)),
                format!(
                    "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
                    rng.below(1 << 32),
                    rng.below(1 << 16),
                    rng.below(1 << 12),
                    0x8000 | rng.below(1 << 14),
                    rng.below(1 << 48)
                ),
            ),
        };
        let dates: Vec<String> = (0..self.dates)
            .map(|_| {
                let mut ms = FIRST_MS + rng.below((LAST_MS - FIRST_MS) as u64) as i64;
                // Whole seconds sometimes: their ".000" must still be written.
                if rng.chance(5) {
                    ms -= ms % 1000;
                }
                format_iso_millis(ms)
            })
            .collect();
        let cents = rng.below(100_000_000) as i64 - if rng.chance(10) { 50_000_000 } else { 0 };
        let balance = cents as f64 / 100.0;
        let doc = json!({
            "product": ids.0,
            "requestId": ids.1,
            "group": {
                "kind": rng.pick(&KINDS),
                "default": rng.chance(2),
                "balance": balance,
                "dates": dates,
            }
        });
        self.last_ids = Some(ids);
        let body = serde_json::to_vec(&doc).expect("a Value always serializes");
        let expected = answer(&body).expect("generated documents are valid");
        WorkCase { body, expected }
    }

    pub fn cases(&mut self, n: usize) -> Vec<WorkCase> {
        (0..n).map(|_| self.next_case()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn reproducible_from_the_seed() {
        assert_eq!(
            WorkGenerator::new(42, 10).cases(20),
            WorkGenerator::new(42, 10).cases(20)
        );
        assert_ne!(
            WorkGenerator::new(42, 10).cases(5),
            WorkGenerator::new(43, 10).cases(5)
        );
    }

    #[test]
    fn documents_are_distinct_and_valid() {
        let cases = WorkGenerator::new(1, 10).cases(500);
        let bodies: HashSet<_> = cases.iter().map(|c| c.body.clone()).collect();
        assert_eq!(bodies.len(), 500);
        for c in &cases {
            let doc: Value = serde_json::from_slice(&c.body).unwrap();
            assert_eq!(doc["group"]["dates"].as_array().unwrap().len(), 10);
            assert_eq!(c.expected["requestId"], doc["requestId"]);
            assert_eq!(c.expected["client"]["balance"], doc["group"]["balance"]);
        }
    }

    #[test]
    fn some_share_ids_but_not_answers() {
        let cases = WorkGenerator::new(9, 3).cases(200);
        let shared = cases
            .windows(2)
            .filter(|w| w[0].expected["requestId"] == w[1].expected["requestId"])
            .filter(|w| w[0].expected != w[1].expected)
            .count();
        assert!(shared >= 10, "{shared}");
    }

    #[test]
    fn whole_seconds_keep_their_milliseconds() {
        let cases = WorkGenerator::new(3, 10).cases(50);
        assert!(cases
            .iter()
            .any(|c| c.body.windows(5).any(|w| w == b".000Z")));
    }
}
