//! One worker thread's event loop: its share of the connections, the phases
//! of the run, pacing, timeouts and reconnects. Everything here is owned by
//! the thread; the only shared state is the cancel flag read and the progress
//! counters written a few times a second. The loop drives any [`Protocol`]
//! (HTTP/1.1 or WebSocket) over any [`Io`] backend (epoll or io_uring), both
//! chosen once per run.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::backend::{Connect, Event, Io};
use crate::clock::{ns, Clock};
use crate::conn::{Conn, InFlight};
use crate::control::WorkerProgress;
use crate::cpu::thread_cpu;
use crate::epoll::EpollIo;
use crate::error::EngineError;
use crate::error_kind::ErrorKind;
use crate::h2::{H2Conn, H2Request};
use crate::pacing::Pacer;
use crate::plan::IoBackend;
use crate::plan::LoadPlan;
use crate::proto::{ConnPlan, Protocol};
use crate::stats::{Recorder, WorkerStats};
use crate::tls::Tls;
use crate::transport::ReadOutcome;
use crate::uring::UringIo;
use crate::wake::WakeBatch;
use crate::window::{Phase, Window, WindowFacts};
use crate::ws::{fresh_seed, WsConn};

/// Shared by every connection of the worker: one buffer, not one per socket.
const READ_BUF: usize = 64 * 1024;
/// Wait before reconnecting after a failed connect, so a refusing server
/// costs a bounded number of attempts rather than a busy loop.
const CONNECT_BACKOFF_NS: u64 = 10_000_000;
/// How often requests are checked against the timeout.
const TIMEOUT_SCAN_NS: u64 = 50_000_000;
/// How often a worker publishes its counters. The runner's warm phase
/// (crates/suite/src/warm.rs) reads them at 0.5 s window edges: a counter up
/// to this stale at either edge moves a window's figure by up to this over
/// the window's length (at 100 ms, ±20%, more than the noise the
/// steady-state rule must see through; at 20 ms, ±4%). Two relaxed stores
/// per publish.
const PUBLISH_NS: u64 = 20_000_000;
/// The longest the loop sleeps without looking at the clock and cancel flag.
const MAX_SLEEP_NS: u64 = 50_000_000;

/// What a worker is given: its share of the plan.
pub(crate) struct WorkerSetup {
    pub connections: usize,
    /// Measured attempts left, for an exact-count run.
    pub budget: Option<u64>,
    pub pacer: Pacer,
    /// Where in the round-robin of request templates this worker starts.
    pub first_template: usize,
    /// The run-wide index of this worker's first connection, so source
    /// addresses go round-robin over all connections, not per worker.
    pub first_conn: usize,
}

/// What a worker hands back.
pub(crate) struct WorkerOutcome {
    pub stats: WorkerStats,
    pub connections: usize,
    pub window: WindowFacts,
    pub interrupted: bool,
}

pub(crate) struct Shared<'a> {
    pub plan: &'a LoadPlan,
    /// The plan's requests in HTTP/2 form, for an HTTP/2 run.
    pub h2: &'a [H2Request],
    pub clock: Clock,
    pub cancel: &'a AtomicBool,
    /// The caller's early end of warm-up (`control::NOT_SET` when none).
    pub warmup_end_ns: &'a AtomicU64,
    pub progress: &'a WorkerProgress,
}

#[derive(Debug, Clone, Copy)]
enum Link {
    Down,
    Connecting { since: u64 },
    Up,
}

struct Slot<P> {
    conn: P,
    link: Link,
    /// Requests sent on the current socket (no-keep-alive sends one).
    served: u32,
    /// In the open-loop idle list (which may hold stale entries).
    idle_listed: bool,
    /// Had its one connection, for a plan without reconnects.
    spent: bool,
    /// Got a good answer while measuring.
    answered: bool,
}

struct Worker<'a, P, B> {
    shared: Shared<'a>,
    /// What the connections read of the plan, borrowed from it once.
    conn_plan: ConnPlan<'a>,
    io: B,
    slots: Vec<Slot<P>>,
    scratch: Box<[u8]>,
    stats: WorkerStats,
    pacer: Pacer,
    window: Window,
    next_template: usize,
    /// Open loop: connected slots with nothing in flight, ready for the next
    /// scheduled request.
    idle: Vec<usize>,
    /// Slots waiting to reconnect, with the time they may.
    retry: Vec<(u64, usize)>,
    /// Slots whose read budget ran out with data possibly left, and whether
    /// their peer had closed: read again next turn, since edge-triggered
    /// readiness will not report them again.
    unread: Vec<(usize, bool)>,
    next_scan: u64,
    /// Answers ended and the time at the last scan, for the wake-up batch.
    last_scan: (u64, u64),
    next_publish: u64,
    interrupted: bool,
    first_conn: usize,
}

/// Runs a worker on `backend` (which `run` has checked this kernel allows).
pub(crate) fn run_worker(
    setup: WorkerSetup,
    shared: Shared<'_>,
    backend: IoBackend,
) -> Result<WorkerOutcome, EngineError> {
    let paced = setup.pacer.is_open();
    let n = setup.connections;
    match backend {
        IoBackend::Epoll => {
            let io = EpollIo::new(n, paced).map_err(EngineError::EventLoop)?;
            by_protocol(setup, shared, io)
        }
        IoBackend::Uring => {
            let io = UringIo::new(n).map_err(EngineError::EventLoop)?;
            by_protocol(setup, shared, io)
        }
    }
}

fn by_protocol<B: Io>(
    setup: WorkerSetup,
    shared: Shared<'_>,
    io: B,
) -> Result<WorkerOutcome, EngineError> {
    let plan = shared.plan;
    match (plan.ws.is_some(), plan.h2, plan.tls.is_some()) {
        (true, _, false) => drive::<WsConn, B>(setup, shared, io),
        (true, _, true) => drive::<Tls<WsConn>, B>(setup, shared, io),
        (false, false, false) => drive::<Conn, B>(setup, shared, io),
        (false, false, true) => drive::<Tls<Conn>, B>(setup, shared, io),
        (false, true, false) => drive::<H2Conn, B>(setup, shared, io),
        (false, true, true) => drive::<Tls<H2Conn>, B>(setup, shared, io),
    }
}

fn drive<P: Protocol, B: Io>(
    setup: WorkerSetup,
    shared: Shared<'_>,
    io: B,
) -> Result<WorkerOutcome, EngineError> {
    let mut worker = Worker::<P, B>::new(setup, shared, io);
    worker.run();
    Ok(worker.into_outcome())
}

impl<'a, P: Protocol, B: Io> Worker<'a, P, B> {
    fn new(setup: WorkerSetup, shared: Shared<'a>, io: B) -> Self {
        let plan = shared.plan;
        let seed = fresh_seed();
        let slots = (0..setup.connections)
            .map(|i| Slot {
                conn: P::for_plan(
                    &ConnPlan::of(plan, shared.h2),
                    seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                ),
                link: Link::Down,
                served: 0,
                idle_listed: false,
                spent: false,
                answered: false,
            })
            .collect();
        Worker {
            conn_plan: ConnPlan::of(plan, shared.h2),
            io,
            slots,
            scratch: vec![0u8; READ_BUF].into_boxed_slice(),
            stats: WorkerStats::new(),
            pacer: setup.pacer,
            window: Window::new(plan.warmup, plan.stop, setup.budget),
            // A WebSocket plan has no request templates.
            next_template: setup.first_template % plan.requests.len().max(1),
            idle: Vec::new(),
            retry: Vec::new(),
            unread: Vec::new(),
            next_scan: 0,
            last_scan: (0, 0),
            next_publish: 0,
            interrupted: false,
            first_conn: setup.first_conn,
            shared,
        }
    }

    fn run(&mut self) {
        let mut events = Vec::with_capacity(1024);
        let now = self.shared.clock.now();
        self.advance(now);
        for i in 0..self.slots.len() {
            self.open(i, now);
        }
        while self.window.phase() != Phase::Done {
            let now = self.shared.clock.now();
            self.advance(now);
            if self.window.phase() == Phase::Done {
                break;
            }
            self.reconnect_due(now);
            if now >= self.next_scan {
                self.scan_timeouts(now);
                self.next_scan = now + TIMEOUT_SCAN_NS;
            }
            if self.pacer.is_open() {
                self.dispatch_open(now);
            }
            if now >= self.next_publish {
                self.publish();
                self.next_publish = now + PUBLISH_NS;
            }
            let sleep = self.sleep_for(now);
            let before = self.shared.clock.now();
            events.clear();
            let polled = self.io.wait(sleep, &mut events);
            let after = self.shared.clock.now();
            self.window.add_idle(after - before);
            if let Err(e) = polled {
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // epoll itself failing leaves nothing to measure with.
                self.interrupted = true;
                self.end(after);
                break;
            }
            for &event in &events {
                self.on_event(event);
            }
            for (i, peer_closed) in std::mem::take(&mut self.unread) {
                // A slot that failed since has a new socket, read by events.
                if matches!(self.slots[i].link, Link::Up) {
                    self.on_read(i, peer_closed);
                }
            }
            if self.window.phase() == Phase::Drain && self.stats.measured_inflight == 0 {
                self.end(self.stats.last_answer_ns);
            }
        }
        self.publish();
    }

    /// An event of a slot counts only for the link it was meant for: a slot
    /// closed and reopened earlier in the same batch has a new socket.
    fn on_event(&mut self, event: Event) {
        match event {
            Event::Timer => {}
            Event::Connecting(i) => {
                if let Link::Connecting { since } = self.slots[i].link {
                    self.on_connect(i, since);
                }
            }
            Event::Writable(i) => {
                if matches!(self.slots[i].link, Link::Up) && self.slots[i].conn.has_output() {
                    self.flush(i);
                    // What held the next request back may be written now.
                    if !self.slots[i].conn.has_output() {
                        let now = self.shared.clock.now();
                        self.ready_for_more(i, now);
                    }
                }
            }
            Event::Readable { slot, closed } => {
                if matches!(self.slots[slot].link, Link::Up) {
                    self.on_read(slot, closed);
                }
            }
        }
    }

    /// Moves through the phases on time; a cancel ends the run at once.
    fn advance(&mut self, now: u64) {
        if self.shared.cancel.load(Ordering::Relaxed) {
            self.interrupted = true;
            self.end(now);
            return;
        }
        let early = self.shared.warmup_end_ns.load(Ordering::Relaxed);
        if early != crate::control::NOT_SET {
            self.window.end_warmup_at(early);
        }
        if let Some(deadline) = self.window.advance(now, thread_cpu) {
            self.end(deadline);
        }
    }

    /// Ends the run at `at`. Work still under way then was busy
    /// connection-time too.
    fn end(&mut self, at: u64) {
        if self.window.open() {
            let start = self.window.started_ns();
            for slot in &self.slots {
                let since = match slot.link {
                    Link::Connecting { since } => Some(since),
                    Link::Up => slot.conn.oldest_sent(),
                    Link::Down => None,
                };
                if let Some(since) = since {
                    self.stats.conn_busy_len_ns += at.saturating_sub(since.max(start));
                }
                if let (Link::Up, Some(sent)) = (slot.link, slot.conn.oldest_sent()) {
                    let waited = at.saturating_sub(sent);
                    self.stats.unfinished_oldest_ns = self.stats.unfinished_oldest_ns.max(waited);
                }
            }
            // Neither answered nor failed: counted apart, never dropped.
            self.stats.unfinished = self.stats.measured_inflight;
            if self.stats.unfinished == 0 {
                self.stats.unfinished_oldest_ns = 0;
            }
        }
        self.window.end(at, thread_cpu);
    }

    fn sleep_for(&self, now: u64) -> Duration {
        let mut until = now + MAX_SLEEP_NS;
        if let Some(change) = self.window.next_change_ns() {
            until = until.min(change);
        }
        if !self.unread.is_empty() {
            return Duration::ZERO;
        }
        until = until.min(self.next_scan).min(self.next_publish);
        if let Some(&(at, _)) = self.retry.iter().min_by_key(|(at, _)| *at) {
            until = until.min(at);
        }
        Duration::from_nanos(until.saturating_sub(now))
    }

    /// Starts a connection for slot `i`, unless nothing more will be sent
    /// or the plan gives each client one connection and this one had it.
    fn open(&mut self, i: usize, now: u64) {
        if !self.window.may_send() || self.slots[i].spent {
            return;
        }
        if !self.shared.plan.reconnect {
            self.slots[i].spent = true;
        }
        let sources = &self.shared.plan.sources;
        let source = (!sources.is_empty()).then(|| sources[(self.first_conn + i) % sources.len()]);
        match self.io.connect(i, self.shared.plan.addr, source) {
            Ok(()) => {
                let slot = &mut self.slots[i];
                slot.link = Link::Connecting { since: now };
                slot.served = 0;
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    fn on_connect(&mut self, i: usize, since: u64) {
        let now = self.shared.clock.now();
        match self.io.connect_outcome(i) {
            Connect::Up => {}
            Connect::Pending => return,
            Connect::Failed => return self.connect_failed(i, now),
        }
        self.slots[i].link = Link::Up;
        if self.window.measuring() {
            self.stats.connect.record(now - since);
            self.stats.conn_busy_len_ns += now.saturating_sub(since.max(self.window.started_ns()));
            self.stats.connects += 1;
        }
        // A protocol with a set-up (the WebSocket upgrade) sends it first.
        self.slots[i].conn.on_connected(&self.conn_plan, now);
        if self.slots[i].conn.has_output() {
            self.flush(i);
        }
        self.ready_for_more(i, now);
    }

    /// A connect failed or timed out: counted as one failed attempt of the
    /// measured phase, then retried after a short back-off.
    fn connect_failed(&mut self, i: usize, now: u64) {
        if self.window.measuring() {
            if let Link::Connecting { since } = self.slots[i].link {
                self.stats.conn_busy_len_ns +=
                    now.saturating_sub(since.max(self.window.started_ns()));
            }
            self.stats.errors.add(ErrorKind::Connect);
            self.stats.last_answer_ns = now;
            self.window.spend();
        }
        self.close(i);
        if self.shared.plan.reconnect {
            self.retry.push((now + CONNECT_BACKOFF_NS, i));
        }
    }

    fn reconnect_due(&mut self, now: u64) {
        if self.retry.is_empty() {
            return;
        }
        let mut k = 0;
        while k < self.retry.len() {
            if self.retry[k].0 <= now {
                let (_, i) = self.retry.swap_remove(k);
                self.open(i, now);
            } else {
                k += 1;
            }
        }
    }

    fn close(&mut self, i: usize) {
        self.io.close(i);
        let slot = &mut self.slots[i];
        slot.link = Link::Down;
        slot.conn.reset();
    }

    /// Fails what is in flight on slot `i` and starts over on a new socket.
    /// With nothing in flight (bytes nobody asked for) the connection itself
    /// failed: counted as one failed attempt, as a failed connect is.
    fn fail(&mut self, i: usize, kind: ErrorKind, now: u64) {
        if self.slots[i].conn.in_flight() == 0 {
            // A set-up under way (a WebSocket handshake) was busy time.
            if let Some(since) = self.slots[i].conn.oldest_sent() {
                self.setup_busy(since, now);
            }
            if self.window.measuring() {
                self.stats.errors.add(kind);
                self.stats.last_answer_ns = now;
                self.window.spend();
            }
        }
        let mut sink = Recorder {
            measuring_since: self.measuring_since(),
            stats: &mut self.stats,
        };
        self.slots[i].conn.fail_all(kind, now, &mut sink);
        self.close(i);
        self.open(i, now);
    }

    fn flush(&mut self, i: usize) {
        if !matches!(self.slots[i].link, Link::Up) {
            return;
        }
        match self.io.flush(i, &mut self.slots[i].conn) {
            Ok(n) => self.stats.bytes_written += n,
            Err(kind) => {
                let now = self.shared.clock.now();
                self.fail(i, kind, now);
            }
        }
    }

    fn on_read(&mut self, i: usize, peer_closed: bool) {
        let now = self.shared.clock.now();
        let measuring_since = self.measuring_since();
        let slot = &mut self.slots[i];
        let setting_up = (!slot.conn.set_up()).then(|| slot.conn.oldest_sent());
        let ok_before = self.stats.ok;
        let mut read = 0;
        let outcome = self.io.read(
            i,
            &mut slot.conn,
            peer_closed,
            &mut self.scratch,
            &self.conn_plan,
            now,
            &mut Recorder {
                measuring_since,
                stats: &mut self.stats,
            },
            &mut read,
        );
        self.stats.bytes_read += read;
        if self.window.open() {
            self.stats.measured_bytes_read += read;
        }
        if let Some(h) = self.slots[i].conn.take_handshake() {
            self.stats.handshake(h, self.window.measuring());
        }
        if self.stats.ok > ok_before && !self.slots[i].answered {
            self.slots[i].answered = true;
            self.stats.connections_answered += 1;
        }
        if let Some(Some(since)) = setting_up {
            if self.slots[i].conn.set_up() {
                self.setup_busy(since, now);
            }
        }
        match outcome {
            ReadOutcome::Open | ReadOutcome::More => {
                if outcome == ReadOutcome::More {
                    self.unread.push((i, peer_closed));
                }
                // Reading may have queued an answer of its own (a pong).
                if self.slots[i].conn.has_output() {
                    self.flush(i);
                }
                self.ready_for_more(i, now);
            }
            ReadOutcome::Eof if self.slots[i].conn.in_flight() > 0 => {
                self.fail(i, ErrorKind::ClosedEarly, now)
            }
            ReadOutcome::Eof => {
                self.close(i);
                self.open(i, now);
            }
            ReadOutcome::Failed(kind) => self.fail(i, kind, now),
        }
    }

    /// Slot `i` may take more work: send the next request(s), or wait in the
    /// idle list for the schedule, or make a new connection.
    fn ready_for_more(&mut self, i: usize, now: u64) {
        let keepalive = self.shared.plan.keepalive;
        let slot = &self.slots[i];
        // Output still unwritten holds the next request back (backpressure):
        // a server that answers without reading would otherwise grow the
        // queue without end (issue 27). The writable event brings it back.
        if !matches!(slot.link, Link::Up) || !slot.conn.set_up() || slot.conn.has_output() {
            return;
        }
        if slot.conn.in_flight() == 0 {
            let used_up = match self.shared.plan.requests_per_connection {
                Some(k) => slot.served >= k,
                None => !keepalive && slot.served > 0,
            };
            if slot.conn.closing() || used_up {
                self.close(i);
                self.open(i, now);
                return;
            }
        }
        // Requests to start: a new batch once all answers are in (HTTP/1.1's
        // pipeline, or one), or HTTP/2's streams refilled as each ends.
        let limit = if keepalive {
            self.shared.plan.pipeline
        } else {
            1
        };
        let room = slot.conn.room(limit);
        if room == 0 {
            return;
        }
        if !self.window.may_send() {
            return;
        }
        if self.pacer.is_open() {
            match self.pacer.due(now) {
                Some(intended) => {
                    self.send(i, intended, now);
                    self.flush(i);
                }
                None if !self.slots[i].idle_listed => {
                    self.slots[i].idle_listed = true;
                    self.idle.push(i);
                }
                None => {}
            }
            return;
        }
        for _ in 0..room {
            if !self.window.may_send() {
                break;
            }
            self.send(i, now, now);
        }
        self.flush(i);
    }

    /// Open loop: hands every due request to an idle connection. Requests due
    /// while none is idle wait, keeping their intended time.
    fn dispatch_open(&mut self, now: u64) {
        while self.window.may_send() {
            let Some(intended) = self.pacer.due(now) else {
                break;
            };
            let Some(i) = self.pop_idle() else {
                return;
            };
            self.send(i, intended, now);
            self.flush(i);
        }
        if self.window.may_send() && !self.idle.is_empty() {
            let at = self.pacer.next_at();
            self.io.arm_timer(at, now);
        }
    }

    fn pop_idle(&mut self) -> Option<usize> {
        while let Some(i) = self.idle.pop() {
            let slot = &mut self.slots[i];
            slot.idle_listed = false;
            if matches!(slot.link, Link::Up)
                && slot.conn.room(1) > 0
                && slot.conn.set_up()
                && !slot.conn.closing()
            {
                return Some(i);
            }
        }
        None
    }

    fn send(&mut self, i: usize, intended: u64, now: u64) {
        let plan = self.shared.plan;
        let t = self.next_template;
        self.next_template = if t + 1 >= plan.requests.len() {
            0
        } else {
            t + 1
        };
        let measured = self.window.measuring();
        if measured {
            self.stats.measured_inflight += 1;
            self.window.spend();
        }
        self.pacer.take();
        let req = InFlight {
            template: t as u32,
            intended_ns: intended,
            sent_ns: now,
            measured,
        };
        let slot = &mut self.slots[i];
        slot.conn.enqueue(req, &self.conn_plan);
        slot.served += 1;
    }

    /// A set-up (a WebSocket handshake) that began at `since` ended at `now`:
    /// its part inside the measured window was busy connection-time, as a
    /// connect's is.
    fn setup_busy(&mut self, since: u64, now: u64) {
        if let Some(start) = self.measuring_since() {
            self.stats.conn_busy_len_ns += now.saturating_sub(since.max(start));
        }
    }

    /// When measuring started, once it has: answers from then on count as
    /// busy connection-time.
    fn measuring_since(&self) -> Option<u64> {
        self.window.open().then(|| self.window.started_ns())
    }

    fn scan_timeouts(&mut self, now: u64) {
        let timeout = ns(self.shared.plan.timeout);
        let mut in_flight = 0;
        for i in 0..self.slots.len() {
            match self.slots[i].link {
                Link::Connecting { since } if now.saturating_sub(since) > timeout => {
                    if self.window.measuring() {
                        self.stats.connect_timeouts += 1;
                    }
                    self.connect_failed(i, now)
                }
                Link::Up => {
                    if let Some(sent) = self.slots[i].conn.oldest_sent() {
                        if now.saturating_sub(sent) > timeout {
                            self.fail(i, ErrorKind::Timeout, now);
                        }
                    }
                    in_flight += self.slots[i].conn.in_flight() as u64;
                }
                _ => {}
            }
        }
        self.size_wake_batch(in_flight, now);
    }

    /// Sizes the backend's wake-up batch from the requests in flight and
    /// the answers since the last scan (see [`crate::wake`]).
    fn size_wake_batch(&mut self, in_flight: u64, now: u64) {
        let ended = self.stats.ok + self.stats.warm_ok + self.stats.errors.total();
        let answers = ended.saturating_sub(self.last_scan.0);
        let over = now.saturating_sub(self.last_scan.1);
        self.last_scan = (ended, now);
        self.io
            .set_wake_batch(WakeBatch::for_load(in_flight, answers, over));
    }

    fn publish(&self) {
        let p = self.shared.progress;
        p.requests.store(self.stats.ok, Ordering::Relaxed);
        p.answered
            .store(self.stats.ok + self.stats.warm_ok, Ordering::Relaxed);
        p.errors.store(self.stats.errors.total(), Ordering::Relaxed);
        p.measuring
            .store(self.window.phase() != Phase::Warmup, Ordering::Relaxed);
    }

    fn into_outcome(self) -> WorkerOutcome {
        WorkerOutcome {
            connections: self.slots.len(),
            window: self.window.facts(),
            interrupted: self.interrupted,
            stats: self.stats,
        }
    }
}
