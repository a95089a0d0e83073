//! What happened to a resident server (a suite's `[warmup] process =
//! "run"`) while the run kept it up: its start, what it did while it waited
//! its turn (CPU and memory), a crash found at its next turn, and its
//! restart. One row per event, in the order they happened.

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServerEventKind {
    /// Started and ready, before the first round.
    Started,
    /// Waited its turn: `waited_s`, the CPU it used meanwhile (`cpu_s`) and
    /// its memory when its turn came (`rss_bytes`).
    Idle,
    /// Found exited at its turn or after a cell (`detail`: how it ended and
    /// the end of its output).
    Crashed,
    /// Started again after a crash; its cells of that round are failed.
    Restarted,
    /// Crashed more often than the run restarts a server: its cells fail
    /// from here on.
    GaveUp,
}

impl ServerEventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerEventKind::Started => "started",
            ServerEventKind::Idle => "idle",
            ServerEventKind::Crashed => "crashed",
            ServerEventKind::Restarted => "restarted",
            ServerEventKind::GaveUp => "gave-up",
        }
    }

    pub fn parse(s: &str) -> Option<ServerEventKind> {
        [
            ServerEventKind::Started,
            ServerEventKind::Idle,
            ServerEventKind::Crashed,
            ServerEventKind::Restarted,
            ServerEventKind::GaveUp,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One event of a resident server.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ServerEvent {
    pub server: String,
    pub variant: String,
    /// The round it happened in (0: before the first).
    pub round: u32,
    /// RFC 3339 UTC.
    pub at: String,
    pub kind: ServerEventKind,
    /// Idle: how long it waited since its last cell ended.
    pub waited_s: Option<f64>,
    /// Idle: the CPU seconds its process tree used while it waited.
    pub cpu_s: Option<f64>,
    /// Idle and started: its process tree's resident memory.
    pub rss_bytes: Option<u64>,
    pub detail: Option<String>,
}

/// A waiting server using more than this share of a core is spinning: it
/// takes CPU from the server being measured (they share the server's CPUs).
/// An idle runtime's housekeeping (a JVM's GC and JIT threads finishing,
/// timers) stays well below it: at most 0.6% of a core over waits of
/// minutes in the standard suite (kotlin-ktor; 2026-12-07).
pub const SPINNING_CORES: f64 = 0.05;

/// Waits shorter than this are not judged: a JIT runtime goes on compiling
/// for a moment after its load ends, which over a wait of 0.1 s (two cells
/// of one server in a row) looks like a whole core.
pub const JUDGED_WAIT_S: f64 = 2.0;

impl ServerEvent {
    /// The share of a core it used while it waited (Idle events).
    pub fn idle_cores(&self) -> Option<f64> {
        let (cpu, waited) = (self.cpu_s?, self.waited_s?);
        (waited > 0.0).then(|| cpu / waited)
    }

    /// It used more than [`SPINNING_CORES`] over a wait of at least
    /// [`JUDGED_WAIT_S`].
    pub fn spinning(&self) -> bool {
        self.kind == ServerEventKind::Idle
            && self.waited_s.is_some_and(|w| w >= JUDGED_WAIT_S)
            && self.idle_cores().is_some_and(|c| c > SPINNING_CORES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_names() {
        for k in [
            ServerEventKind::Started,
            ServerEventKind::Idle,
            ServerEventKind::Crashed,
            ServerEventKind::Restarted,
            ServerEventKind::GaveUp,
        ] {
            assert_eq!(ServerEventKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(ServerEventKind::parse("asleep"), None);
    }

    #[test]
    fn a_waiting_server_above_a_twentieth_of_a_core_is_spinning() {
        let idle = |cpu: f64, waited: f64| ServerEvent {
            server: "s".into(),
            variant: String::new(),
            round: 2,
            at: String::new(),
            kind: ServerEventKind::Idle,
            waited_s: Some(waited),
            cpu_s: Some(cpu),
            rss_bytes: None,
            detail: None,
        };
        assert!(!idle(0.5, 60.0).spinning());
        assert!(idle(30.0, 60.0).spinning());
        assert!(!idle(1.0, 0.0).spinning(), "no wait, no share");
        assert!(!idle(0.1, 0.1).spinning(), "a JIT finishing after its cell");
    }
}
