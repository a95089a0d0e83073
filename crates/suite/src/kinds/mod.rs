//! Scenario kinds beyond closed-loop throughput: what a suite file says of
//! each (`kind = "idle"` and its fields), how long a cell of it takes, and
//! how its cell is measured. One module per kind that needs more than a
//! plan tweak: idle.rs, storm.rs, sweep.rs (rate-sweep and fixed-rate),
//! hostile.rs with hostile_run.rs and attacker.rs (issue 33).

mod attacker;
mod engine_run;
pub use netbench_records::facts;
pub mod hostile;
pub mod hostile_run;
mod idle;
mod storm;
mod sweep;

use std::time::Duration;

use serde::Deserialize;

pub(crate) use engine_run::sleep_until;
pub use engine_run::{measure_plan, measure_plan_warm, Carrier, Measure, Measured, Traffic};
pub use facts::{
    fit_line, knee, Facts, FixedRateFacts, IdleFacts, IdleLevelFacts, LineFit, PipelinedFacts,
    ShortLivedFacts, StormFacts, SweepFacts, SweepStep,
};
pub use idle::idle_facts;

use netbench_engine::{LoadPlan, Pacing, Stop, WsPlan};

use crate::suite::{Endpoint, Length, Scenario};

/// What a scenario measures.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Closed loop at saturation: requests/s and latency (the default).
    Throughput,
    /// Connections opened in levels (the scenario's connection counts), one
    /// request on each (on endpoint ws: the upgrade, then one message
    /// echoed), then held open and silent while the server is sampled:
    /// memory and CPU per idle connection.
    Idle {
        hold: Duration,
        heartbeat: Option<Duration>,
    },
    /// Every client connects at once and sends one request.
    Storm,
    /// A new connection every K requests (K = 1: keep-alive off).
    ShortLived { requests_per_connection: u32 },
    /// The closed-loop peak, then open-loop steps at shares of it.
    RateSweep { steps: Vec<f64>, slo_p99: Duration },
    /// One open-loop rate for every server: server CPU per request.
    FixedRate { rate: f64 },
    /// HTTP/1.1 pipelining, a reference figure only.
    Pipelined { depth: u32 },
    /// A good load at a fixed rate alone, beside each attack, and after
    /// (issue 33; `hostile.rs`).
    Hostile(Box<hostile::HostilePlan>),
}

/// The suite-file fields of the kinds, as written.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawKind {
    pub kind: Option<String>,
    pub hold: Option<String>,
    pub heartbeat: Option<String>,
    pub requests_per_connection: Option<u32>,
    pub steps: Option<Vec<f64>>,
    pub slo_p99: Option<String>,
    pub rate: Option<f64>,
    pub pipeline: Option<u32>,
    /// Filled by the suite's parser from its own fields.
    #[serde(skip)]
    pub hostile: hostile::RawHostile,
}

/// The kinds' names as suite files spell them.
pub const KIND_NAMES: &str =
    "throughput, idle, storm, short-lived, rate-sweep, fixed-rate, pipelined, hostile";

/// Rate-sweep steps when the suite names none: 10% to 110% of the peak.
pub const DEFAULT_STEPS: [f64; 7] = [0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1];
/// The p99 a sweep step must stay under for the knee, when the suite says
/// nothing.
pub const DEFAULT_SLO_P99: Duration = Duration::from_millis(10);
const DEFAULT_HOLD: Duration = Duration::from_secs(5);
const DEFAULT_PIPELINE: u32 = 16;

impl RawKind {
    /// Checks the fields against the kind and resolves defaults. `parse` is
    /// the suite's duration parser; errors are messages for the scenario.
    pub(crate) fn resolve(
        &self,
        parse: impl Fn(&str, &str) -> Result<Duration, String>,
    ) -> Result<Kind, String> {
        let name = self.kind.as_deref().unwrap_or("throughput");
        let only = |allowed: &[&str]| -> Result<(), String> {
            let given = [
                ("hold", self.hold.is_some()),
                ("heartbeat", self.heartbeat.is_some()),
                (
                    "requests_per_connection",
                    self.requests_per_connection.is_some(),
                ),
                ("steps", self.steps.is_some()),
                ("slo_p99", self.slo_p99.is_some()),
                ("rate", self.rate.is_some()),
                ("pipeline", self.pipeline.is_some()),
            ];
            let hostile = self.hostile.given();
            match given
                .iter()
                .chain(hostile.iter())
                .find(|(f, set)| *set && !allowed.contains(f))
            {
                Some((f, _)) => Err(format!("`{f}` does not go with kind = \"{name}\"")),
                None => Ok(()),
            }
        };
        let kind = match name {
            "throughput" => {
                only(&[])?;
                Kind::Throughput
            }
            "idle" => {
                only(&["hold", "heartbeat"])?;
                let hold = match &self.hold {
                    Some(h) => parse("hold", h)?,
                    None => DEFAULT_HOLD,
                };
                if hold < Duration::from_millis(500) {
                    return Err("`hold` must be at least 500ms, so the sampler sees it".into());
                }
                let heartbeat = self
                    .heartbeat
                    .as_deref()
                    .map(|h| parse("heartbeat", h))
                    .transpose()?;
                if heartbeat.is_some_and(|h| h.is_zero()) {
                    return Err("`heartbeat` must be above zero".into());
                }
                Kind::Idle { hold, heartbeat }
            }
            "storm" => {
                only(&[])?;
                Kind::Storm
            }
            "short-lived" => {
                only(&["requests_per_connection"])?;
                match self.requests_per_connection.unwrap_or(1) {
                    0 => return Err("`requests_per_connection` must be at least 1".into()),
                    k => Kind::ShortLived {
                        requests_per_connection: k,
                    },
                }
            }
            "rate-sweep" => {
                only(&["steps", "slo_p99"])?;
                let steps = self.steps.clone().unwrap_or_else(|| DEFAULT_STEPS.to_vec());
                if steps.is_empty()
                    || steps
                        .iter()
                        .any(|s| !(s.is_finite() && *s > 0.0 && *s <= 10.0))
                {
                    return Err(
                        "`steps` must list shares of the peak above 0 and at most 10, e.g. [0.5, 0.9, 1.1]"
                            .into(),
                    );
                }
                let slo_p99 = match &self.slo_p99 {
                    Some(s) => parse("slo_p99", s)?,
                    None => DEFAULT_SLO_P99,
                };
                if slo_p99.is_zero() {
                    return Err("`slo_p99` must be above zero".into());
                }
                Kind::RateSweep { steps, slo_p99 }
            }
            "fixed-rate" => {
                only(&["rate"])?;
                match self.rate {
                    Some(r) if r.is_finite() && r > 0.0 && r <= 1e9 => Kind::FixedRate { rate: r },
                    Some(_) => {
                        return Err("`rate` must be above 0 and at most 1e9 requests/s".into())
                    }
                    None => return Err("kind = \"fixed-rate\" needs `rate` (requests/s)".into()),
                }
            }
            "pipelined" => {
                only(&["pipeline"])?;
                match self.pipeline.unwrap_or(DEFAULT_PIPELINE) {
                    d if (2..=1024).contains(&d) => Kind::Pipelined { depth: d },
                    _ => return Err("`pipeline` must be between 2 and 1024".into()),
                }
            }
            "hostile" => {
                let mut fields = vec!["rate"];
                fields.extend(hostile::HOSTILE_FIELDS);
                only(&fields)?;
                Kind::Hostile(Box::new(hostile::resolve(
                    self.rate,
                    &self.hostile,
                    &parse,
                )?))
            }
            other => {
                return Err(format!(
                    "unknown kind `{other}`; the kinds are {KIND_NAMES}"
                ))
            }
        };
        Ok(kind)
    }
}

impl Kind {
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Throughput => "throughput",
            Kind::Idle { .. } => "idle",
            Kind::Storm => "storm",
            Kind::ShortLived { .. } => "short-lived",
            Kind::RateSweep { .. } => "rate-sweep",
            Kind::FixedRate { .. } => "fixed-rate",
            Kind::Pipelined { .. } => "pipelined",
            Kind::Hostile(_) => "hostile",
        }
    }

    /// Whether one cell covers all the scenario's connection counts (the
    /// idle levels are opened one after the other on one server).
    pub fn one_cell_for_all_counts(&self) -> bool {
        matches!(self, Kind::Idle { .. })
    }

    /// Whether the kind measures for a set time (`duration`); a storm ends
    /// when every client has, an idle cell after its holds.
    pub fn timed(&self) -> bool {
        !matches!(self, Kind::Idle { .. } | Kind::Storm)
    }

    /// Roughly how long one cell's measuring takes, beyond the server's start
    /// and the cool-down: `per_run` is warm-up plus duration of one engine
    /// run, `levels` the connection counts.
    /// Whether a warm phase before the measured window fits the kind: the
    /// closed-loop kinds at saturation, whose figure a cold JIT understates.
    /// The others measure a server as it is (idle memory, a storm, fixed
    /// rates), and the sweep finds its peak in its own first run.
    pub fn warms(&self) -> bool {
        matches!(
            self,
            Kind::Throughput | Kind::ShortLived { .. } | Kind::Pipelined { .. }
        )
    }

    pub fn cell_time(&self, per_run: Duration, levels: usize) -> Duration {
        match self {
            // Opening each level takes about a second at 10,000 connections.
            Kind::Idle { hold, .. } => (*hold + Duration::from_secs(1)) * levels as u32,
            Kind::Storm => Duration::from_secs(2),
            // The peak, then each step; fixed-rate runs a second time only
            // for servers slower than its rate.
            Kind::RateSweep { steps, .. } => per_run * (steps.len() as u32 + 1),
            Kind::Hostile(h) => h.cell_time(per_run),
            _ => per_run,
        }
    }
}

/// A request (or a connect) slower than this fails as a timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Payload of each WebSocket message of a ws scenario: a chat-sized text
/// message, `netbench load --ws`'s default.
const WS_MESSAGE: usize = 64;

/// The closed-loop plan of a scenario at `connections`, which each kind
/// adjusts.
pub(crate) fn base_plan(scenario: &Scenario, connections: u32, m: &Measure<'_>) -> LoadPlan {
    LoadPlan {
        sources: Vec::new(),
        io: m.io,
        addr: m.addr,
        connections: connections as usize,
        workers: m.workers.clamp(1, connections as usize),
        stop: match scenario.length {
            Length::Duration(d) => Stop::After(d),
            Length::Requests(n) => Stop::Count(n),
        },
        pacing: Pacing::Closed,
        warmup: scenario.warmup,
        timeout: REQUEST_TIMEOUT,
        keepalive: scenario.sends_keepalive() || m.carrier.h2,
        // HTTP/2's streams per connection; HTTP/1.1 one request at a time
        // (the pipelined kind sets its own).
        pipeline: if m.carrier.h2 { m.carrier.streams } else { 1 },
        requests_per_connection: None,
        reconnect: true,
        requests: m.traffic.requests.clone(),
        ws: ws_plan(scenario, m),
        tls: m.carrier.tls.clone(),
        session: m.traffic.session.clone(),
        h2: m.carrier.h2,
    }
}

/// The WebSocket half of a ws scenario's plan; None for HTTP endpoints.
pub(crate) fn ws_plan(scenario: &Scenario, m: &Measure<'_>) -> Option<WsPlan> {
    (scenario.endpoint == Endpoint::Ws).then(|| WsPlan {
        path: "/ws".to_string(),
        host: m.addr.to_string(),
        message_size: WS_MESSAGE,
        binary: false,
    })
}

/// What a cell of the kind measured. An idle cell's facts come later, from
/// the samples (see [`idle_facts`]): it hands back its engine result for it.
pub enum Outcome {
    Done(Box<Measured>),
    Idle {
        measured: Box<Measured>,
        result: Box<netbench_engine::IdleResult>,
        hold: Duration,
        heartbeat: Option<Duration>,
    },
}

/// Measures one cell of `scenario` at `connections` on a running server.
pub fn measure_cell(
    scenario: &Scenario,
    connections: u32,
    m: &Measure<'_>,
) -> Result<Outcome, String> {
    measure_cell_warm(scenario, connections, m, None).map(|(o, _)| o)
}

/// [`measure_cell`], warmed until steady on the measured run's own
/// connections when `warm` is given and the kind warms
/// ([`Kind::warms`]); the warm-up's record comes back with the outcome.
pub fn measure_cell_warm(
    scenario: &Scenario,
    connections: u32,
    m: &Measure<'_>,
    warm: Option<&crate::warm::WarmIn<'_>>,
) -> Result<(Outcome, Option<crate::store::WarmUp>), String> {
    let mut plan = base_plan(scenario, connections, m);
    let warm = warm.filter(|_| scenario.kind.warms());
    let done = |((r, cpu, from), warmup), facts| {
        Ok((
            Outcome::Done(Box::new(engine_run::from_result(r, cpu, from, facts))),
            warmup,
        ))
    };
    let unwarmed = |o: Result<Outcome, String>| o.map(|o| (o, None));
    match &scenario.kind {
        Kind::Throughput => done(measure_plan_warm(&plan, m, warm)?, None),
        Kind::ShortLived {
            requests_per_connection: k,
        } => {
            // K = 1 is keep-alive off as ab does it (Connection: close, the
            // server closes); above, the client closes after K answers.
            if *k > 1 {
                plan.requests_per_connection = Some(*k);
            }
            let facts = Facts::ShortLived(ShortLivedFacts {
                requests_per_connection: *k,
            });
            done(measure_plan_warm(&plan, m, warm)?, Some(facts))
        }
        Kind::Pipelined { depth } => {
            plan.pipeline = *depth as usize;
            let facts = Facts::Pipelined(PipelinedFacts { depth: *depth });
            done(measure_plan_warm(&plan, m, warm)?, Some(facts))
        }
        Kind::Storm => unwarmed(
            storm::measure_storm(connections, ws_plan(scenario, m), m)
                .map(|x| Outcome::Done(Box::new(x))),
        ),
        Kind::RateSweep { steps, slo_p99 } => unwarmed(
            sweep::measure_sweep(&plan, steps, *slo_p99, m).map(|x| Outcome::Done(Box::new(x))),
        ),
        Kind::FixedRate { rate } => {
            unwarmed(sweep::measure_fixed_rate(&plan, *rate, m).map(|x| Outcome::Done(Box::new(x))))
        }
        // A hostile cell needs its server's handle (a crash restarts it):
        // the cell runs it through `hostile_run::measure_hostile`.
        Kind::Hostile(_) => Err("a hostile cell is measured by the cell itself".into()),
        Kind::Idle { hold, heartbeat } => {
            let (measured, result) = idle::measure_idle(
                &scenario.connections,
                *hold,
                *heartbeat,
                ws_plan(scenario, m),
                m,
            )?;
            Ok((
                Outcome::Idle {
                    measured: Box::new(measured),
                    result: Box::new(result),
                    hold: *hold,
                    heartbeat: *heartbeat,
                },
                None,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(_: &str, s: &str) -> Result<Duration, String> {
        crate::suite::parse_duration(s)
    }

    fn raw(kind: &str) -> RawKind {
        RawKind {
            kind: Some(kind.into()),
            ..RawKind::default()
        }
    }

    #[test]
    fn resolves_defaults_and_refuses_fields_of_other_kinds() {
        assert_eq!(RawKind::default().resolve(parse).unwrap(), Kind::Throughput);
        assert_eq!(
            raw("idle").resolve(parse).unwrap(),
            Kind::Idle {
                hold: DEFAULT_HOLD,
                heartbeat: None
            }
        );
        assert_eq!(
            raw("short-lived").resolve(parse).unwrap(),
            Kind::ShortLived {
                requests_per_connection: 1
            }
        );
        assert_eq!(
            raw("pipelined").resolve(parse).unwrap(),
            Kind::Pipelined { depth: 16 }
        );
        let sweep = raw("rate-sweep").resolve(parse).unwrap();
        assert_eq!(
            sweep,
            Kind::RateSweep {
                steps: DEFAULT_STEPS.to_vec(),
                slo_p99: DEFAULT_SLO_P99
            }
        );
        let mut r = raw("storm");
        r.rate = Some(5.0);
        assert!(r.resolve(parse).unwrap_err().contains("`rate` does not go"));
        assert!(raw("fixed-rate")
            .resolve(parse)
            .unwrap_err()
            .contains("needs `rate`"));
        assert!(raw("sprint")
            .resolve(parse)
            .unwrap_err()
            .contains("unknown kind"));
        let mut r = raw("rate-sweep");
        r.steps = Some(vec![0.5, -1.0]);
        assert!(r.resolve(parse).is_err());
        let mut r = raw("idle");
        r.hold = Some("100ms".into());
        assert!(r.resolve(parse).unwrap_err().contains("500ms"));
        let mut r = raw("pipelined");
        r.pipeline = Some(1);
        assert!(r.resolve(parse).is_err());
    }
}
