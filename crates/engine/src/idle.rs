//! The idle scenario's loop: opens connections in steps (100, then 1,000,
//! ...), gets one checked answer on each, then holds them all open and silent
//! (or with a heartbeat) while the caller samples the server. One thread and
//! no pacing: idle connections cost the client next to nothing to watch, and
//! the caller's sampler, not this loop, is what measures. Like the worker it
//! drives either protocol through [`Protocol`], chosen once per run (HTTP
//! keep-alive requests, or WebSocket connections that upgrade first and then
//! send messages whose echoes are checked, either over TLS), on either
//! backend through [`Io`] (epoll, or io_uring where the kernel allows it).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::backend::{Connect, Event, Io};
use crate::clock::{ns, Clock};
use crate::conn::{AnswerSink, Conn, InFlight};
use crate::cpu::thread_cpu;
use crate::epoll::EpollIo;
use crate::error::EngineError;
use crate::error_kind::{ErrorCounts, ErrorKind};
use crate::histogram::LatencyHistogram;
use crate::idle_plan::IdlePlan;
use crate::limits::raise_fd_limit;
use crate::plan::IoBackend;
use crate::proto::{ConnPlan, Protocol};
use crate::result::LatencySummary;
use crate::tls::Tls;
use crate::transport::ReadOutcome;
use crate::uring::{uring_refusal, UringIo};
use crate::ws::{fresh_seed, WsConn};

/// How often the loop looks at the clock, the cancel flag and the timeouts
/// while nothing happens: idle connections need no finer watch.
const TICK: Duration = Duration::from_millis(20);
/// Reads in a row on one readiness event before a connection that never
/// stops sending is failed: an idle server has nothing to stream.
const MAX_READ_TURNS: usize = 16;

/// One level of an idle run. Times are seconds since the `epoch` the caller
/// gave, so they line up with its own samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleLevel {
    /// Connections asked for at this level (all levels so far).
    pub connections: usize,
    /// Connections open, each with its first answer in, when the hold began.
    pub open: usize,
    /// Connections of this level whose connect, WebSocket upgrade or first
    /// request failed.
    pub failed: usize,
    /// From the first new connect to the last first answer of this level.
    pub open_s: f64,
    pub hold_from_s: f64,
    pub hold_to_s: f64,
    /// Connections the server closed while they were held.
    pub closed_by_server: usize,
    pub heartbeats: u64,
    pub heartbeat_errors: u64,
    /// This thread's CPU time over the level, opening and hold.
    pub client_cpu_s: f64,
}

/// What an idle run saw.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdleResult {
    /// Ended early by a cancel: the levels cover the time run.
    pub interrupted: bool,
    pub levels: Vec<IdleLevel>,
    /// Failed connects, WebSocket upgrades and first requests, by kind
    /// (heartbeats not included).
    pub errors: ErrorCounts,
    /// Connect times of every level.
    pub connect: LatencySummary,
    /// From sending each connection's first request (for WebSocket: its
    /// first message, after the upgrade) to its answer.
    pub first_answer: LatencySummary,
    /// The kernel interface the loop used.
    #[serde(default)]
    pub io: IoBackend,
    /// Why io_uring was asked for and epoll ran instead.
    #[serde(default)]
    pub io_fallback: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Connecting {
        since: u64,
    },
    /// Connected, the protocol's set-up under way (the WebSocket upgrade
    /// sent, its `101` awaited); the first request follows it.
    SettingUp,
    /// A request is out: the first one, or a heartbeat.
    Waiting {
        first: bool,
    },
    Idle {
        next_beat: u64,
    },
    Closed,
}

struct Slot<P> {
    /// The backend holds a socket for it (connecting or up).
    live: bool,
    conn: P,
    state: State,
}

/// Collects the one answer a slot waits for.
#[derive(Default)]
struct OneAnswer {
    outcome: Option<(Result<(), ErrorKind>, u64, u64)>,
}

impl AnswerSink for OneAnswer {
    fn answer(&mut self, req: &InFlight, outcome: Result<(), ErrorKind>, now: u64) {
        self.outcome = Some((outcome, req.sent_ns, now));
    }
}

struct Idle<'a, P, B> {
    plan: &'a IdlePlan,
    /// What the connections read of the plan, borrowed from it once.
    conn_plan: ConnPlan<'a>,
    /// Varies each connection's WebSocket keys, masks and payloads.
    seed: u64,
    clock: Clock,
    io: B,
    events: Vec<Event>,
    slots: Vec<Slot<P>>,
    scratch: Box<[u8]>,
    errors: ErrorCounts,
    connect: LatencyHistogram,
    first_answer: LatencyHistogram,
    /// Per level, reset when it starts.
    failed: usize,
    holding: bool,
    closed_by_server: usize,
    heartbeats: u64,
    heartbeat_errors: u64,
}

/// Runs the plan's levels one after the other, or until `cancel` is set.
/// `epoch` is the instant the result's times count from.
pub fn run_idle(
    plan: &IdlePlan,
    epoch: Instant,
    cancel: &AtomicBool,
) -> Result<IdleResult, EngineError> {
    plan.validate().map_err(EngineError::IdlePlan)?;
    let most = *plan.levels.last().unwrap_or(&1);
    raise_fd_limit(most)?;
    let (io, fallback) = match plan.io {
        IoBackend::Epoll => (IoBackend::Epoll, None),
        IoBackend::Uring => match uring_refusal() {
            None => (IoBackend::Uring, None),
            Some(why) => (IoBackend::Epoll, Some(why)),
        },
    };
    let mut result = match io {
        IoBackend::Epoll => {
            let io = EpollIo::new(most, false).map_err(EngineError::EventLoop)?;
            by_protocol(plan, epoch, cancel, io)
        }
        IoBackend::Uring => {
            let io = UringIo::new(most).map_err(EngineError::EventLoop)?;
            by_protocol(plan, epoch, cancel, io)
        }
    }?;
    result.io = io;
    result.io_fallback = fallback;
    Ok(result)
}

fn by_protocol<B: Io>(
    plan: &IdlePlan,
    epoch: Instant,
    cancel: &AtomicBool,
    io: B,
) -> Result<IdleResult, EngineError> {
    match (plan.ws.is_some(), plan.tls.is_some()) {
        (true, false) => hold_levels::<WsConn, B>(plan, epoch, cancel, io),
        (false, false) => hold_levels::<Conn, B>(plan, epoch, cancel, io),
        (true, true) => hold_levels::<Tls<WsConn>, B>(plan, epoch, cancel, io),
        (false, true) => hold_levels::<Tls<Conn>, B>(plan, epoch, cancel, io),
    }
}

fn hold_levels<P: Protocol, B: Io>(
    plan: &IdlePlan,
    epoch: Instant,
    cancel: &AtomicBool,
    io: B,
) -> Result<IdleResult, EngineError> {
    let most = *plan.levels.last().unwrap_or(&1);
    let mut idle = Idle::<P, B> {
        plan,
        conn_plan: ConnPlan {
            pipeline: 1,
            requests: plan.request.as_slice(),
            ws: plan.ws.as_ref(),
            tls: plan.tls.as_ref(),
            session: None,
            h2: &[],
        },
        seed: fresh_seed(),
        clock: Clock::new(epoch),
        io,
        events: Vec::with_capacity(1024),
        slots: Vec::with_capacity(most),
        scratch: vec![0u8; 64 * 1024].into_boxed_slice(),
        errors: ErrorCounts::default(),
        connect: LatencyHistogram::new(),
        first_answer: LatencyHistogram::new(),
        failed: 0,
        holding: false,
        closed_by_server: 0,
        heartbeats: 0,
        heartbeat_errors: 0,
    };
    let mut levels = Vec::with_capacity(plan.levels.len());
    let mut interrupted = false;
    for &target in &plan.levels {
        let cpu_before = thread_cpu();
        idle.failed = 0;
        idle.closed_by_server = 0;
        idle.heartbeats = 0;
        idle.heartbeat_errors = 0;
        idle.holding = false;
        let started = idle.clock.now();
        let first_new = idle.slots.len();
        for i in first_new..target {
            idle.open(i, started);
        }
        // Opening: until every new connection has its first answer or failed.
        while idle.slots[first_new..].iter().any(|s| {
            matches!(
                s.state,
                State::Connecting { .. } | State::SettingUp | State::Waiting { first: true }
            )
        }) {
            if cancel.load(Ordering::Relaxed) {
                interrupted = true;
                break;
            }
            idle.turn()?;
        }
        let opened = idle.clock.now();
        let open = idle
            .slots
            .iter()
            .filter(|s| matches!(s.state, State::Idle { .. } | State::Waiting { .. }))
            .count();
        // Holding: silent, or a heartbeat per connection.
        idle.holding = true;
        let hold_to = opened + ns(plan.hold);
        while !interrupted && idle.clock.now() < hold_to {
            if cancel.load(Ordering::Relaxed) {
                interrupted = true;
                break;
            }
            idle.turn()?;
        }
        let ended = idle.clock.now();
        levels.push(IdleLevel {
            connections: target,
            open,
            failed: idle.failed,
            open_s: (opened - started) as f64 / 1e9,
            hold_from_s: opened as f64 / 1e9,
            hold_to_s: ended as f64 / 1e9,
            closed_by_server: idle.closed_by_server,
            heartbeats: idle.heartbeats,
            heartbeat_errors: idle.heartbeat_errors,
            client_cpu_s: thread_cpu().saturating_sub(cpu_before).as_secs_f64(),
        });
        if interrupted {
            break;
        }
    }
    Ok(IdleResult {
        interrupted,
        levels,
        errors: idle.errors,
        connect: idle.connect.summary(),
        first_answer: idle.first_answer.summary(),
        io: IoBackend::Epoll,
        io_fallback: None,
    })
}

impl<P: Protocol, B: Io> Idle<'_, P, B> {
    fn open(&mut self, i: usize, now: u64) {
        let (live, state) = match self.io.connect(i, self.plan.addr, None) {
            Ok(()) => (true, State::Connecting { since: now }),
            Err(_) => {
                self.errors.add(ErrorKind::Connect);
                self.failed += 1;
                (false, State::Closed)
            }
        };
        let seed = self.seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.slots.push(Slot {
            live,
            conn: P::for_plan(&self.conn_plan, seed),
            state,
        });
    }

    /// One wait for events, then what is due: timeouts and heartbeats.
    fn turn(&mut self) -> Result<(), EngineError> {
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        match self.io.wait(TICK, &mut events) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(EngineError::EventLoop(e)),
        }
        for &event in &events {
            match event {
                Event::Timer => {}
                Event::Connecting(i) => {
                    if let State::Connecting { since } = self.slots[i].state {
                        self.on_connect(i, since);
                    }
                }
                // What a first write left (a full socket buffer), or on
                // io_uring a send that finished.
                Event::Writable(i) => {
                    if self.slots[i].state != State::Closed && self.slots[i].conn.has_output() {
                        self.flush(i);
                    }
                }
                Event::Readable { slot, closed } => {
                    if !matches!(
                        self.slots[slot].state,
                        State::Closed | State::Connecting { .. }
                    ) {
                        self.on_read(slot, closed);
                    }
                }
            }
        }
        self.events = events;
        self.due();
        Ok(())
    }

    fn on_connect(&mut self, i: usize, since: u64) {
        let now = self.clock.now();
        if !self.slots[i].live {
            return;
        }
        match self.io.connect_outcome(i) {
            Connect::Up => {}
            Connect::Pending => return,
            Connect::Failed => return self.first_failed(i, ErrorKind::Connect),
        }
        self.connect.record(now - since);
        // A protocol with a set-up (the WebSocket upgrade) sends it first;
        // the first request waits for it to finish (see `on_read`).
        let slot = &mut self.slots[i];
        slot.conn.on_connected(&self.conn_plan, now);
        if slot.conn.set_up() {
            self.send(i, true, now);
        } else {
            slot.state = State::SettingUp;
            self.flush(i);
        }
    }

    fn send(&mut self, i: usize, first: bool, now: u64) {
        let req = InFlight {
            template: 0,
            intended_ns: now,
            sent_ns: now,
            measured: true,
        };
        let slot = &mut self.slots[i];
        slot.conn.enqueue(req, &self.conn_plan);
        slot.state = State::Waiting { first };
        self.flush(i);
    }

    /// Writes what slot `i` has queued; a socket buffer that fills up is
    /// written on when the socket says it is writable again.
    fn flush(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        if slot.live && self.io.flush(i, &mut slot.conn).is_err() {
            self.ended(i, Err(ErrorKind::Write));
        }
    }

    fn on_read(&mut self, i: usize, peer_closed: bool) {
        for _ in 0..MAX_READ_TURNS {
            let now = self.clock.now();
            let slot = &mut self.slots[i];
            if !slot.live {
                return;
            }
            let mut sink = OneAnswer::default();
            let mut read = 0;
            let outcome = self.io.read(
                i,
                &mut slot.conn,
                peer_closed,
                &mut self.scratch,
                &self.conn_plan,
                now,
                &mut sink,
                &mut read,
            );
            if let Some((answer, sent, at)) = sink.outcome {
                if let State::Waiting { first: true } = slot.state {
                    if answer.is_ok() {
                        self.first_answer.record(at.saturating_sub(sent));
                    }
                }
                self.ended(i, answer);
            }
            if matches!(outcome, ReadOutcome::Open | ReadOutcome::More) {
                let slot = &self.slots[i];
                if slot.state == State::SettingUp && slot.conn.set_up() {
                    self.send(i, true, now);
                } else if slot.conn.has_output() {
                    // An answer of the protocol's own: a pong to a ping.
                    self.flush(i);
                }
            }
            match outcome {
                ReadOutcome::Open => return,
                ReadOutcome::More => continue,
                ReadOutcome::Eof => return self.ended(i, Err(ErrorKind::ClosedEarly)),
                ReadOutcome::Failed(kind) => return self.ended(i, Err(kind)),
            }
        }
        self.ended(i, Err(ErrorKind::Malformed));
    }

    /// A request on slot `i` ended, or the connection did (`Err` with no
    /// request out: the server closed an idle connection, or sent bytes
    /// nobody asked for).
    fn ended(&mut self, i: usize, outcome: Result<(), ErrorKind>) {
        let now = self.clock.now();
        match (self.slots[i].state, outcome) {
            (State::Closed, _) => {}
            (State::Waiting { first: true }, Ok(())) => self.idle_until_beat(i, now),
            (State::SettingUp | State::Waiting { first: true }, Err(kind)) => {
                self.first_failed(i, kind)
            }
            // No request is out during the set-up, so none can end.
            (State::SettingUp, Ok(())) => {}
            (State::Waiting { first: false }, Ok(())) => {
                self.heartbeats += 1;
                self.idle_until_beat(i, now);
            }
            (State::Waiting { first: false }, Err(_)) => {
                self.heartbeat_errors += 1;
                self.close(i);
            }
            (State::Idle { .. }, Err(ErrorKind::ClosedEarly)) => {
                if self.holding {
                    self.closed_by_server += 1;
                }
                self.close(i);
            }
            (State::Idle { .. }, _) | (State::Connecting { .. }, _) => self.close(i),
        }
    }

    fn idle_until_beat(&mut self, i: usize, now: u64) {
        if self.slots[i].conn.closing() {
            // The server said it closes after this answer: it cannot be held.
            if self.holding {
                self.closed_by_server += 1;
            }
            return self.close(i);
        }
        let next_beat = self
            .plan
            .heartbeat
            .map_or(u64::MAX, |h| now.saturating_add(ns(h)));
        self.slots[i].state = State::Idle { next_beat };
    }

    fn first_failed(&mut self, i: usize, kind: ErrorKind) {
        self.errors.add(kind);
        self.failed += 1;
        self.close(i);
    }

    fn close(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        let mut drop_all = OneAnswer::default();
        slot.conn.fail_all(ErrorKind::ClosedEarly, 0, &mut drop_all);
        if slot.live {
            slot.live = false;
            self.io.close(i);
        }
        slot.state = State::Closed;
    }

    /// Timeouts of connects and answers, and heartbeats that are due.
    fn due(&mut self) {
        let now = self.clock.now();
        let timeout = ns(self.plan.timeout);
        for i in 0..self.slots.len() {
            match self.slots[i].state {
                State::Connecting { since } if now.saturating_sub(since) > timeout => {
                    self.first_failed(i, ErrorKind::Connect)
                }
                State::SettingUp | State::Waiting { .. } => {
                    // The upgrade under way, or the request out.
                    if let Some(sent) = self.slots[i].conn.oldest_sent() {
                        if now.saturating_sub(sent) > timeout {
                            self.ended(i, Err(ErrorKind::Timeout));
                        }
                    }
                }
                State::Idle { next_beat } if self.holding && now >= next_beat => {
                    self.send(i, false, now)
                }
                _ => {}
            }
        }
    }
}
