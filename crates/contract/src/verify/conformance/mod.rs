//! HTTP/1.1 conformance probes (issue 33): RFC 9112/9110 cases sent as raw
//! bytes to any HTTP/1.1 server, each judged pass or fail. A score, never a
//! gate: `verify` passes or fails on the contract's checks alone.

mod cases;
mod judge;
mod probe;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use cases::{Target, MISSING_PATH, OVERSIZE};

/// How long one case may take, liveness check included: a correct server
/// answers in milliseconds, so only a case that fails waits this long. Wide
/// enough for a loaded 2-core machine, short enough that a server failing
/// every case costs a couple of minutes, not an hour.
pub const CASE_TIMEOUT: Duration = Duration::from_secs(3);

/// How many case deadlines the whole set may take: a server that holds
/// every case's connection to its deadline took 32 of them (62 s at 2 s,
/// ~96 s per server inside `run`, issue 42). Once they are spent, the cases
/// left fail unprobed, saying so; a case started near the end gets what is
/// left. A server that answers takes milliseconds a case, and one that
/// fails a few cases by holding them open (the testkit's lax framing holds
/// five) stays well inside.
pub const SET_DEADLINES: u32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseStatus {
    Pass,
    Fail,
}

/// One case's outcome, as the report stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseResult {
    /// Stable short name (`cl-te`).
    pub id: String,
    /// "RFC 9112 §6.3".
    pub rfc: String,
    pub title: String,
    pub status: CaseStatus,
    /// One line: what came back and what was expected.
    pub reason: String,
}

/// Every case's outcome: `verify`'s `conformance` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConformanceReport {
    pub passed: u32,
    pub total: u32,
    pub cases: Vec<CaseResult>,
}

impl ConformanceReport {
    pub fn failed(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases.iter().filter(|c| c.status == CaseStatus::Fail)
    }

    pub fn get(&self, id: &str) -> Option<&CaseResult> {
        self.cases.iter().find(|c| c.id == id)
    }
}

/// Where the probes go.
#[derive(Debug, Clone)]
pub struct ConformanceOptions {
    pub addr: SocketAddr,
    pub target: Target,
    /// Bounds each case (`CASE_TIMEOUT` by default).
    pub timeout: Duration,
    /// Bounds the whole set; None: [`SET_DEADLINES`] × `timeout`.
    pub budget: Option<Duration>,
}

impl ConformanceOptions {
    /// Probes `path` on any HTTP/1.1 server; pipelined order told by statuses.
    pub fn new(addr: SocketAddr, host: String, path: String) -> Self {
        ConformanceOptions {
            addr,
            target: Target {
                host,
                path,
                echo_prefix: None,
            },
            timeout: CASE_TIMEOUT,
            budget: None,
        }
    }
}

/// The ids of every case, in the order they run.
pub fn case_ids() -> Vec<&'static str> {
    let t = Target {
        host: "h".into(),
        path: "/".into(),
        echo_prefix: None,
    };
    cases::cases(&t).iter().map(|c| c.id).collect()
}

/// Runs every case, one connection each, one after another (a server that
/// serves one connection at a time is judged on its answers, not starved).
/// Never panics on a bad server: a case that cannot connect fails.
pub fn conformance(opts: &ConformanceOptions) -> ConformanceReport {
    let t = &opts.target;
    let alive = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        t.path, t.host
    );
    let started = Instant::now();
    let budget = opts
        .budget
        .unwrap_or(opts.timeout * SET_DEADLINES)
        .max(opts.timeout);
    let cases: Vec<CaseResult> = cases::cases(t)
        .iter()
        .map(|case| {
            let left = budget.saturating_sub(started.elapsed());
            let verdict = if left.is_zero() {
                judge::Verdict {
                    pass: false,
                    reason: format!(
                        "not probed: the probe set's {:?} ran out (earlier cases held their connections to the deadline)",
                        budget
                    ),
                }
            } else {
                match probe::probe(opts.addr, case, opts.timeout.min(left), alive.as_bytes()) {
                    Ok(seen) => judge::judge(&case.expect, &seen),
                    Err(e) => judge::Verdict {
                        pass: false,
                        reason: e,
                    },
                }
            };
            CaseResult {
                id: case.id.to_string(),
                rfc: case.rfc.to_string(),
                title: case.title.to_string(),
                status: if verdict.pass {
                    CaseStatus::Pass
                } else {
                    CaseStatus::Fail
                },
                reason: verdict.reason,
            }
        })
        .collect();
    ConformanceReport {
        passed: cases
            .iter()
            .filter(|c| c.status == CaseStatus::Pass)
            .count() as u32,
        total: cases.len() as u32,
        cases,
    }
}
