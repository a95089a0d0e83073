//! What a run records of each scenario of its suite when it begins, so the
//! reports lay out tables and notes without parsing the stored suite file.

use serde::{Deserialize, Serialize};

use crate::network::{Bandwidth, NetPlacement};
use crate::server::Offer;

/// One scenario of a run's suite, as the run used it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioRecord {
    /// Its place in the suite file, from 0.
    pub position: u32,
    pub name: String,
    /// As suite files spell it: throughput, idle, storm, short-lived,
    /// rate-sweep, fixed-rate, pipelined.
    pub kind: String,
    /// The contract endpoint it loads: blank, work, echo, db, db-list, ws.
    pub endpoint: String,
    /// The connection counts the suite gives (an idle cell steps through
    /// them all in one measurement at the largest).
    pub connections: Vec<u32>,
    /// Whether the suite leaves keep-alive on (`keepalive = false` turns it
    /// off).
    pub keepalive: bool,
    /// Short-lived only: requests each connection sends before closing.
    pub requests_per_connection: Option<u32>,
    /// The optional contract part it needs; servers that do not offer it
    /// are left out of its cells, never failed.
    pub needs: Option<Offer>,
    pub placement: NetPlacement,
    /// tbf's rate when the suite shapes the path; None unshaped.
    pub bandwidth: Option<Bandwidth>,
    /// The name of the first scenario of the suite that measures the same
    /// cells, placement aside (its own name when it is the first): the
    /// scenarios sharing it are one test measured in different places.
    pub same_cells_as: String,
}

impl ScenarioRecord {
    /// Whether its requests/s belongs in the throughput tables: closed loop
    /// at saturation. Idle, storm, rate-sweep and fixed-rate have tables of
    /// their own.
    pub fn in_throughput_tables(&self) -> bool {
        in_throughput_tables(&self.kind)
    }
}

/// Whether a kind's requests/s belongs in the throughput tables.
pub fn in_throughput_tables(kind: &str) -> bool {
    matches!(kind, "throughput" | "short-lived" | "pipelined")
}
