//! Where a scenario's server ran and the path its traffic took (loopback,
//! or a network namespace over a veth pair, shaped or not), as stored; the
//! namespaces themselves are the suite's (crates/suite/src/netns.rs).

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

/// Where a scenario's server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetPlacement {
    /// On 127.0.0.1 beside the client, as every scenario before placements.
    #[default]
    Loopback,
    /// In a network namespace of its own, over a veth pair.
    Netns,
}

impl NetPlacement {
    /// As suite files and the store spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            NetPlacement::Loopback => "loopback",
            NetPlacement::Netns => "netns",
        }
    }

    pub fn parse(s: &str) -> Option<NetPlacement> {
        match s {
            "loopback" => Some(NetPlacement::Loopback),
            "netns" => Some(NetPlacement::Netns),
            _ => None,
        }
    }
}

/// A bandwidth limit in bits per second. tc's units, which are decimal:
/// 1kbit is 1,000 bits/s, 1gbit 10^9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bandwidth {
    pub bits_per_s: u64,
}

impl std::fmt::Display for Bandwidth {
    /// The largest of tc's units that writes it whole: `1gbit`, `1500mbit`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.bits_per_s;
        match b {
            b if b % 1_000_000_000 == 0 => write!(f, "{}gbit", b / 1_000_000_000),
            b if b % 1_000_000 == 0 => write!(f, "{}mbit", b / 1_000_000),
            b if b % 1_000 == 0 => write!(f, "{}kbit", b / 1_000),
            b => write!(f, "{b}bit"),
        }
    }
}

impl Bandwidth {
    /// tbf's bucket: at least one 64 KiB GSO packet, because veth passes
    /// TCP's super-packets of up to 64 KiB whole and tbf would otherwise cut
    /// each into MTU-sized segments itself (work the real link would not do,
    /// charged to the sender); and at least a millisecond at the rate, so
    /// the shaper's timer granularity does not hold the link below its rate.
    /// At 1 gbit/s that is 125,000 bytes: the burst of one switch port.
    pub fn burst_bytes(self) -> u64 {
        (self.bits_per_s / 8 / 1000).max(64 * 1024 + u64::from(MTU))
    }
}

/// The MTU of both veth ends: Ethernet's, what a LAN carries.
pub const MTU: u32 = 1500;

/// What a measurement records of the path between the client and the
/// server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkPath {
    pub placement: NetPlacement,
    /// Where the server listened.
    pub server_addr: IpAddr,
    /// Where the client's connections came from.
    pub client_addr: IpAddr,
    /// Of the interface the traffic crossed (loopback's own, or the veth
    /// pair's).
    pub mtu: u32,
    /// tbf's rate on both ends' egress; None when unshaped.
    #[serde(rename = "bandwidth_bps")]
    pub bandwidth: Option<Bandwidth>,
    /// tbf's bucket; None when unshaped.
    pub burst_bytes: Option<u64>,
}

impl NetworkPath {
    /// "server in a network namespace over a veth pair, MTU 1500, tbf 1gbit".
    pub fn describe(&self) -> String {
        match self.placement {
            NetPlacement::Loopback => format!("server on loopback, MTU {}", self.mtu),
            NetPlacement::Netns => {
                let tbf = self
                    .bandwidth
                    .map_or(String::new(), |b| format!(", tbf {b}"));
                format!(
                    "server in a network namespace over a veth pair, MTU {}{tbf}",
                    self.mtu
                )
            }
        }
    }
}
