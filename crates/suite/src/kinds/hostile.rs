//! The hostile kind's plan as a suite file writes it (`kind = "hostile"`,
//! `rate`, `attacks`, `attack_connections`, `attack_for`, `after`,
//! `window`, `jit_warmup`), checked and bounded: every attack is finite in
//! connections and time. How a cell of it runs is `hostile_run.rs`.

use std::time::Duration;

/// One attack, as `netbench attack` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attack {
    /// Connections that send a header byte every few seconds.
    Slowloris,
    /// Requests whose answers are read a byte at a time.
    SlowRead,
    /// A flood of malformed requests.
    Malformed,
    /// Requests with oversized headers.
    Oversized,
    /// Connections opened and held idle.
    ConnFlood,
    /// Requests cut into tiny TCP segments.
    TcpFrag,
}

impl Attack {
    pub const ALL: [Attack; 6] = [
        Attack::Slowloris,
        Attack::SlowRead,
        Attack::Malformed,
        Attack::Oversized,
        Attack::ConnFlood,
        Attack::TcpFrag,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Attack::Slowloris => "slowloris",
            Attack::SlowRead => "slow-read",
            Attack::Malformed => "malformed",
            Attack::Oversized => "oversized",
            Attack::ConnFlood => "conn-flood",
            Attack::TcpFrag => "tcp-frag",
        }
    }

    fn parse(s: &str) -> Option<Attack> {
        Attack::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// What a hostile scenario does on each server.
#[derive(Debug, Clone, PartialEq)]
pub struct HostilePlan {
    /// The good load's open-loop rate, requests/s.
    pub rate: f64,
    /// Run one after the other on one server process (a fresh one after a
    /// crash).
    pub attacks: Vec<Attack>,
    /// Each attacker's connections.
    pub attack_connections: u32,
    /// How long each attack runs, the good load measured beside it.
    pub attack_for: Duration,
    /// The good load alone after each attack, in `window`s.
    pub after: Duration,
    pub window: Duration,
    /// A closed-loop warm-up before the baseline for servers whose runtime
    /// compiles while it runs (the manifest's `jit`).
    pub jit_warmup: Duration,
}

/// The hostile fields as a suite file writes them.
#[derive(Debug, Default, Clone)]
pub(crate) struct RawHostile {
    pub attacks: Option<Vec<String>>,
    pub attack_connections: Option<u32>,
    pub attack_for: Option<String>,
    pub after: Option<String>,
    pub window: Option<String>,
    pub jit_warmup: Option<String>,
}

impl RawHostile {
    /// The fields given, by name, so another kind can refuse them.
    pub(crate) fn given(&self) -> [(&'static str, bool); 6] {
        [
            ("attacks", self.attacks.is_some()),
            ("attack_connections", self.attack_connections.is_some()),
            ("attack_for", self.attack_for.is_some()),
            ("after", self.after.is_some()),
            ("window", self.window.is_some()),
            ("jit_warmup", self.jit_warmup.is_some()),
        ]
    }
}

pub const HOSTILE_FIELDS: [&str; 6] = [
    "attacks",
    "attack_connections",
    "attack_for",
    "after",
    "window",
    "jit_warmup",
];

/// Most connections one attacker may open: enough to exhaust a
/// thread-per-connection server, few enough for the client's file limit.
pub const MAX_ATTACK_CONNECTIONS: u32 = 10_000;
/// Longest attack or after phase: a suite over the zoo must stay bounded.
pub const MAX_PHASE: Duration = Duration::from_secs(120);
const DEFAULT_ATTACK_CONNECTIONS: u32 = 200;
const DEFAULT_PHASE: Duration = Duration::from_secs(3);
const DEFAULT_WINDOW: Duration = Duration::from_millis(500);
const DEFAULT_JIT_WARMUP: Duration = Duration::from_secs(10);

/// Resolves `kind = "hostile"`'s fields; `rate` is the kinds' shared field.
pub(crate) fn resolve(
    rate: Option<f64>,
    raw: &RawHostile,
    parse: &dyn Fn(&str, &str) -> Result<Duration, String>,
) -> Result<HostilePlan, String> {
    let rate = match rate {
        Some(r) if r.is_finite() && r > 0.0 && r <= 1e7 => r,
        Some(_) => return Err("`rate` must be above 0 and at most 1e7 requests/s".into()),
        None => {
            return Err(
                "kind = \"hostile\" needs `rate`: the good load's requests/s, e.g. rate = 1000"
                    .into(),
            )
        }
    };
    let attacks = match &raw.attacks {
        None => Attack::ALL.to_vec(),
        Some(names) if names.is_empty() => {
            return Err("`attacks` is empty; leave it out to run all six".into())
        }
        Some(names) => {
            let mut out = Vec::with_capacity(names.len());
            for n in names {
                let a = Attack::parse(n).ok_or_else(|| {
                    let all: Vec<&str> = Attack::ALL.iter().map(|a| a.name()).collect();
                    format!("unknown attack `{n}`; the attacks are {}", all.join(", "))
                })?;
                if out.contains(&a) {
                    return Err(format!("attack `{n}` is listed twice"));
                }
                out.push(a);
            }
            out
        }
    };
    let attack_connections = raw.attack_connections.unwrap_or(DEFAULT_ATTACK_CONNECTIONS);
    if !(1..=MAX_ATTACK_CONNECTIONS).contains(&attack_connections) {
        return Err(format!(
            "`attack_connections` must be between 1 and {MAX_ATTACK_CONNECTIONS}"
        ));
    }
    let field = |name: &str, v: &Option<String>, default: Duration| match v {
        Some(s) => parse(name, s),
        None => Ok(default),
    };
    let attack_for = field("attack_for", &raw.attack_for, DEFAULT_PHASE)?;
    let after = field("after", &raw.after, DEFAULT_PHASE)?;
    let window = field("window", &raw.window, DEFAULT_WINDOW)?;
    let jit_warmup = field("jit_warmup", &raw.jit_warmup, DEFAULT_JIT_WARMUP)?;
    for (name, d) in [("attack_for", attack_for), ("after", after)] {
        if d < Duration::from_millis(500) || d > MAX_PHASE {
            return Err(format!(
                "`{name}` must be between 500ms and {}s",
                MAX_PHASE.as_secs()
            ));
        }
    }
    if window < Duration::from_millis(100) || window > after {
        return Err("`window` must be at least 100ms and at most `after`".into());
    }
    if jit_warmup > MAX_PHASE {
        return Err(format!(
            "`jit_warmup` must be at most {}s",
            MAX_PHASE.as_secs()
        ));
    }
    Ok(HostilePlan {
        rate,
        attacks,
        attack_connections,
        attack_for,
        after,
        window,
        jit_warmup,
    })
}

impl HostilePlan {
    /// A cell's measuring time beyond its baseline (`per_run`: warm-up and
    /// duration): each attack and its after phase, and about half a second
    /// per attack for the attacker's start and the after phase's windows'
    /// connects.
    pub fn cell_time(&self, per_run: Duration) -> Duration {
        let each = self.attack_for + self.after + Duration::from_millis(500);
        per_run + each * self.attacks.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(_: &str, s: &str) -> Result<Duration, String> {
        crate::suite::parse_duration(s)
    }

    #[test]
    fn defaults_run_all_six_attacks_and_bad_fields_say_what_to_write() {
        let p = resolve(Some(1000.0), &RawHostile::default(), &parse).unwrap();
        assert_eq!(p.attacks, Attack::ALL.to_vec());
        assert_eq!(p.attack_connections, 200);
        assert_eq!((p.attack_for, p.after), (DEFAULT_PHASE, DEFAULT_PHASE));
        assert_eq!(
            p.cell_time(Duration::from_secs(3)),
            Duration::from_secs(3) + Duration::from_millis(6500) * 6
        );
        assert!(resolve(None, &RawHostile::default(), &parse)
            .unwrap_err()
            .contains("needs `rate`"));
        assert!(resolve(Some(-1.0), &RawHostile::default(), &parse).is_err());
        let with = |f: &dyn Fn(&mut RawHostile)| {
            let mut r = RawHostile::default();
            f(&mut r);
            resolve(Some(500.0), &r, &parse)
        };
        let two = with(&|r| r.attacks = Some(vec!["tcp-frag".into(), "slowloris".into()]));
        assert_eq!(two.unwrap().attacks, [Attack::TcpFrag, Attack::Slowloris]);
        let unknown = with(&|r| r.attacks = Some(vec!["ddos".into()])).unwrap_err();
        assert!(unknown.contains("unknown attack `ddos`") && unknown.contains("conn-flood"));
        assert!(with(&|r| r.attacks = Some(vec![])).is_err());
        let twice = with(&|r| r.attacks = Some(vec!["malformed".into(), "malformed".into()]));
        assert!(twice.unwrap_err().contains("twice"));
        assert!(with(&|r| r.attack_connections = Some(0)).is_err());
        assert!(with(&|r| r.attack_connections = Some(MAX_ATTACK_CONNECTIONS + 1)).is_err());
        let short = with(&|r| r.attack_for = Some("100ms".into())).unwrap_err();
        assert!(short.contains("`attack_for` must be between 500ms"));
        assert!(with(&|r| r.after = Some("10m".into())).is_err());
        assert!(with(&|r| r.window = Some("5s".into())).is_err());
        assert!(with(&|r| r.window = Some("50ms".into())).is_err());
        assert!(with(&|r| r.attack_for = Some("soon".into())).is_err());
    }

    fn suite(scenario: &str) -> Result<crate::suite::Suite, String> {
        let text = format!(
            "servers = [\"*\"]\n[[scenarios]]\nname = \"abuse\"\nendpoint = \"blank\"\n\
             connections = [10]\n{scenario}"
        );
        crate::suite::Suite::parse("t", &text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_suite_file_writes_the_kind_and_its_mistakes_are_named() {
        let s = suite(
            "kind = \"hostile\"\nrate = 800\nduration = \"2s\"\n\
             attacks = [\"conn-flood\"]\nattack_connections = 50\nafter = \"2s\"\n",
        )
        .unwrap();
        let crate::kinds::Kind::Hostile(p) = &s.scenarios[0].kind else {
            panic!("{:?}", s.scenarios[0].kind)
        };
        assert_eq!((p.rate, p.attack_connections), (800.0, 50));
        assert_eq!(p.attacks, [Attack::ConnFlood]);
        assert_eq!(p.after, Duration::from_secs(2));
        // A hostile field under another kind, and a misspelt attack, are
        // refused with the scenario named.
        let e = suite("kind = \"fixed-rate\"\nrate = 800\nattack_for = \"2s\"\n").unwrap_err();
        assert!(
            e.contains("`attack_for` does not go with kind = \"fixed-rate\""),
            "{e}"
        );
        let e = suite("kind = \"hostile\"\nrate = 800\nattacks = [\"slowlorris\"]\n").unwrap_err();
        assert!(
            e.contains("abuse") && e.contains("unknown attack `slowlorris`"),
            "{e}"
        );
        let e = suite("kind = \"hostile\"\nrate = 800\nplacement = \"netns\"\n").unwrap_err();
        assert!(e.contains("runs on loopback"), "{e}");
        let e = suite("kind = \"hostile\"\n").unwrap_err();
        assert!(e.contains("needs `rate`"), "{e}");
        let e = suite("kind = \"hostile\"\nrate = 800\nattack_for = \"soon\"\n").unwrap_err();
        assert!(e.contains("attack_for"), "{e}");
    }
}
