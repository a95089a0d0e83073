//! The settings of adaptive repetitions (`repetitions = "auto"`) as a run
//! used them; the stopping logic is the suite's (crates/suite/src/adaptive.rs).

use std::time::Duration;

/// The settings of adaptive repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adaptive {
    /// Rounds every cell gets before any is judged.
    pub min: u32,
    /// Rounds no cell goes past.
    pub max: u32,
    /// The 95% interval's half-width, relative to the mean, that settles a
    /// cell.
    pub target: f64,
    /// The most time all the cells of a run may take together.
    pub budget: Duration,
}

impl Default for Adaptive {
    fn default() -> Self {
        Adaptive {
            min: 3,
            max: 10,
            target: 0.05,
            budget: Duration::from_secs(25 * 60),
        }
    }
}
