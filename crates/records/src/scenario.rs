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
    /// What carries its requests (contract 1.5): HTTP/1.1 on cleartext
    /// unless the suite says otherwise.
    #[serde(default)]
    pub protocol: Protocol,
    /// HTTP/2's streams in flight per connection (1 otherwise).
    #[serde(default = "one")]
    pub streams: u32,
}

fn one() -> u32 {
    1
}

/// What carries a scenario's requests to the server (CONTRACT.md, version
/// 1.5): each but HTTP/1.1 on cleartext needs its offer and its listener.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// HTTP/1.1 on `PORT`.
    #[default]
    H1,
    /// HTTP/1.1 over TLS on `TLS_PORT`.
    Tls,
    /// HTTP/2 over TLS (ALPN h2) on `TLS_PORT`.
    H2,
    /// HTTP/2 with prior knowledge on `H2C_PORT`.
    H2c,
    /// gRPC over cleartext HTTP/2 on `GRPC_PORT`.
    Grpc,
}

impl Protocol {
    pub const ALL: [Protocol; 5] = [
        Protocol::H1,
        Protocol::Tls,
        Protocol::H2,
        Protocol::H2c,
        Protocol::Grpc,
    ];

    /// The name as suite files and the store write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::H1 => "h1",
            Protocol::Tls => "tls",
            Protocol::H2 => "h2",
            Protocol::H2c => "h2c",
            Protocol::Grpc => "grpc",
        }
    }

    pub fn parse(name: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The part a server must offer to be measured over it.
    pub fn needs(self) -> Option<Offer> {
        match self {
            Protocol::H1 => None,
            Protocol::Tls => Some(Offer::Tls),
            Protocol::H2 => Some(Offer::H2),
            Protocol::H2c => Some(Offer::H2c),
            Protocol::Grpc => Some(Offer::Grpc),
        }
    }

    /// Whether it is HTTP/2 (streams apply).
    pub fn is_h2(self) -> bool {
        matches!(self, Protocol::H2 | Protocol::H2c | Protocol::Grpc)
    }
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
