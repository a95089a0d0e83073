//! Resident servers (a suite's `[warmup] process = "run"`): every server and
//! variant of the run started once, at its first visit (the first round
//! visits each server's cells together), and kept up while the rounds
//! visit their cells. Each process is warmed until steady
//! at its first visit of each cell (the suite's rule, a fresh JIT's too),
//! and afterwards only re-warmed briefly on the cell's own connections (the
//! scenario's `warmup`) before a short measured window.
//!
//! While a server waits its turn, what it does is recorded at its next turn
//! (an Idle event: how long it waited, its CPU meanwhile, its memory): a
//! server that spins takes CPU from the one being measured, and the cells
//! measured meanwhile see it as outside load too. A server found exited is
//! recorded (Crashed), started again (Restarted) and warmed afresh at its
//! next visits; its cells of that round fail, since a fresh process is not
//! the resident one the others of the round were measured against.

use std::collections::{HashMap, HashSet};
use std::time::{Instant, SystemTime};

use netbench_records::{ServerEvent, ServerEventKind};

use crate::cell::{failed, measure_in, wait_for_quiet, CellEnv, CellOutcome, RequestsFor, Session};
use crate::store::{rfc3339, CellKey, MeasurementStatus};
use crate::suite::Scenario;
use crate::targets::Target;
use crate::warm::Warm;

/// How often one server is started again after crashing before the run
/// gives up on it: a server that crashes every round would otherwise spend
/// the run's time warming.
pub const MAX_RESTARTS: u32 = 3;

/// One server variant, as the run keeps it.
struct Slot {
    /// None once the run gave up on it.
    session: Option<Session>,
    restarts: u32,
    /// The round in which it last crashed: its other cells of that round
    /// fail.
    crashed_in: Option<u32>,
    /// When its last cell ended, and its CPU seconds then.
    last_end: Option<(Instant, Option<f64>)>,
    /// The cells (scenario, connections) this process warmed until steady.
    warmed: HashSet<(String, u32)>,
    /// Why there is no process, when it could not be started.
    gone: Option<String>,
}

/// The run's resident servers, by (server, variant).
#[derive(Default)]
pub struct Resident {
    slots: HashMap<(String, String), Slot>,
}

/// What a visit did beside its cell's outcome: the events to record.
pub struct Visit {
    pub outcome: CellOutcome,
    pub events: Vec<ServerEvent>,
}

fn event(key: &CellKey, round: u32, kind: ServerEventKind) -> ServerEvent {
    ServerEvent {
        server: key.server.clone(),
        variant: key.variant.clone(),
        round,
        at: rfc3339(SystemTime::now()),
        kind,
        waited_s: None,
        cpu_s: None,
        rss_bytes: None,
        detail: None,
    }
}

/// The process tree's resident memory.
fn rss(session: &Session) -> Option<u64> {
    crate::sampler::sample_group(session.pid())
        .ok()
        .filter(|s| s.processes > 0)
        .map(|s| s.rss_bytes)
}

impl Resident {
    /// Starts `target` and waits until it answers; Err says why it could
    /// not (its cells then fail with that reason).
    fn start(&mut self, env: &CellEnv<'_>, target: &Target) -> Result<ServerEvent, String> {
        let session = Session::start_on_loopback(env, target)?;
        let key = CellKey {
            server: target.manifest.name.clone(),
            variant: target.variant.clone(),
            scenario: String::new(),
            connections: 0,
            repetition: 0,
        };
        let mut started = event(&key, 0, ServerEventKind::Started);
        started.rss_bytes = rss(&session);
        started.detail = Some(format!("ready in {:.2} s", session.ready().as_secs_f64()));
        self.slots.insert(
            (key.server, key.variant),
            Slot {
                session: Some(session),
                restarts: 0,
                crashed_in: None,
                last_end: None,
                warmed: HashSet::new(),
                gone: None,
            },
        );
        Ok(started)
    }

    /// Notes that `target` could not be started: its cells fail with `why`.
    fn left_out(&mut self, target: &Target, why: String) {
        self.slots.insert(
            (target.manifest.name.clone(), target.variant.clone()),
            Slot {
                session: None,
                restarts: 0,
                crashed_in: None,
                last_end: None,
                warmed: HashSet::new(),
                gone: Some(format!("the resident server could not start: {why}")),
            },
        );
    }

    /// Measures one cell on its resident server: the checks of its wait
    /// first (exited? spinning?), then the cell, warmed until steady the
    /// first time this process meets it and briefly re-warmed after that.
    pub fn visit(
        &mut self,
        env: &CellEnv<'_>,
        target: &Target,
        scenario: &Scenario,
        key: CellKey,
        requests: &RequestsFor<'_>,
        warm: &Warm,
    ) -> Visit {
        let round = key.repetition;
        let (started, at) = (Instant::now(), SystemTime::now());
        let mut events = Vec::new();
        let who = (key.server.clone(), key.variant.clone());
        if !self.slots.contains_key(&who) {
            // Started at its first visit, so that its warm-up curve starts
            // at its start, as a fresh process's does (the start-up
            // figures), and kept from then on.
            match self.start(env, target) {
                Ok(e) => events.push(e),
                Err(e) => self.left_out(target, e),
            }
        }
        let slot = self.slots.get_mut(&who).expect("started or left out above");
        let fail = |key: CellKey, why: String, events: Vec<ServerEvent>| Visit {
            outcome: failed(key, why, started, at),
            events,
        };
        if slot.session.is_none() {
            let why = slot.gone.clone().unwrap_or_else(|| {
                format!(
                    "the server crashed {} times; the run stopped restarting it",
                    slot.restarts + 1
                )
            });
            return fail(key, why, events);
        }
        if let Some(why) = found_exited(slot, env, target, &key, &mut events) {
            return fail(key, why, events);
        }
        if slot.crashed_in == Some(round) {
            let why = format!(
                "the server crashed earlier in round {round} and was started again: a fresh \
                 process is not the one the round's other cells were measured against"
            );
            return fail(key, why, events);
        }
        let session = slot.session.as_mut().expect("checked above");
        let cpu_now = session.cpu_s();
        if let Some((ended, cpu_then)) = slot.last_end {
            let mut idle = event(&key, round, ServerEventKind::Idle);
            idle.waited_s = Some(ended.elapsed().as_secs_f64());
            idle.cpu_s = cpu_then.zip(cpu_now).map(|(a, b)| (b - a).max(0.0));
            idle.rss_bytes = rss(session);
            events.push(idle);
        }
        let quiet = wait_for_quiet(env, Some(session.pid()));
        let cell = (scenario.name.clone(), key.connections);
        let first = !slot.warmed.contains(&cell);
        let rewarmed;
        let scenario = if !first && target.manifest.jit && warm.jit_rewarm > scenario.warmup {
            rewarmed = Scenario {
                warmup: warm.jit_rewarm,
                ..scenario.clone()
            };
            &rewarmed
        } else {
            scenario
        };
        // Warmed until steady the first time; after that the scenario's
        // fixed warm-up on the cell's own connections, before its window.
        let brief = Warm {
            process: warm.process,
            ..Warm::default()
        };
        let outcome = measure_in(
            env,
            session,
            scenario,
            key.clone(),
            requests,
            if first { warm } else { &brief },
            quiet,
        );
        if let CellOutcome::Done(d) = &outcome {
            if d.record.status == MeasurementStatus::Ok {
                slot.warmed.insert(cell);
            }
        }
        let cpu_end = session.cpu_s();
        slot.last_end = Some((Instant::now(), cpu_end));
        // A crash during the cell is in its record; the restart waits for
        // the server's next visit, which records it.
        Visit { outcome, events }
    }

    /// Stops every resident server.
    pub fn stop_all(&mut self) {
        for (_, slot) in self.slots.drain() {
            if let Some(s) = slot.session {
                s.stop();
            }
        }
    }
}

/// When the slot's process has exited: records the crash, starts it again
/// (or gives up after [`MAX_RESTARTS`]) and says why the cell fails.
fn found_exited(
    slot: &mut Slot,
    env: &CellEnv<'_>,
    target: &Target,
    key: &CellKey,
    events: &mut Vec<ServerEvent>,
) -> Option<String> {
    let round = key.repetition;
    let session = slot.session.as_mut()?;
    let status = session.exit_status()?;
    let tail = session.log_tail();
    let mut crashed = event(key, round, ServerEventKind::Crashed);
    crashed.detail = Some(format!("{status}; its last output:\n{}", tail.trim_end()));
    events.push(crashed);
    if let Some(old) = slot.session.take() {
        old.stop();
    }
    slot.crashed_in = Some(round);
    slot.warmed.clear();
    slot.last_end = None;
    if slot.restarts >= MAX_RESTARTS {
        let mut gave_up = event(key, round, ServerEventKind::GaveUp);
        gave_up.detail = Some(format!("crashed {} times", slot.restarts + 1));
        events.push(gave_up);
        return Some(format!(
            "the resident server exited while it waited its turn ({status}), for the {} time: \
             the run stops restarting it",
            ordinal(slot.restarts + 1)
        ));
    }
    slot.restarts += 1;
    match Session::start_on_loopback(env, target) {
        Ok(s) => {
            let mut restarted = event(key, round, ServerEventKind::Restarted);
            restarted.detail = Some(format!("ready in {:.2} s", s.ready().as_secs_f64()));
            events.push(restarted);
            slot.session = Some(s);
        }
        Err(e) => {
            let mut gave_up = event(key, round, ServerEventKind::GaveUp);
            gave_up.detail = Some(format!("could not be started again: {e}"));
            events.push(gave_up);
            slot.gone = Some(format!(
                "the resident server crashed and could not be started again: {e}"
            ));
        }
    }
    Some(format!(
        "the resident server had exited when its turn came ({status}); it was started again \
         and its cells of round {round} fail"
    ))
}

fn ordinal(n: u32) -> String {
    match n {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        n => format!("{n}th"),
    }
}
