//! The attack plan: which attack, against which loopback address, how many
//! connections for how long. Building a plan is where every bound is checked;
//! the attack loops take a plan and never check a bound again.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use netbench_engine::{parse_url, Host};

/// The most connections of the kinds one thread holds (slowloris, slow-read,
/// conn-flood): a poll set this size costs about a millisecond a pass, and it
/// is past what a server of the zoo is asked to hold in the suites.
pub const MAX_HELD_CONNECTIONS: usize = 65_536;

/// The most connections of the flood kinds (malformed, oversized, tcp-frag),
/// one thread each: more threads than this would cost the client machine
/// more than they cost the server.
pub const MAX_FLOOD_CONNECTIONS: usize = 1_024;

/// The longest attack: a run that forgets to stop one still ends.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// What the attack does to each connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttackKind {
    /// A request head sent a byte per interval, never finished.
    Slowloris,
    /// Complete keep-alive requests whose answers are read a byte per
    /// interval through a tiny receive buffer.
    SlowRead,
    /// Broken requests (request lines, header syntax, chunk sizes, binary
    /// garbage), as fast as the connections allow.
    Malformed,
    /// Requests with request lines or header blocks of 64 KiB to 1 MiB.
    Oversized,
    /// Connections opened as fast as possible and held idle.
    ConnFlood,
    /// Complete requests in segments of a byte or a few.
    TcpFrag,
}

impl AttackKind {
    pub const ALL: [AttackKind; 6] = [
        AttackKind::Slowloris,
        AttackKind::SlowRead,
        AttackKind::Malformed,
        AttackKind::Oversized,
        AttackKind::ConnFlood,
        AttackKind::TcpFrag,
    ];

    /// The name on the command line and in the summary.
    pub fn name(self) -> &'static str {
        match self {
            AttackKind::Slowloris => "slowloris",
            AttackKind::SlowRead => "slow-read",
            AttackKind::Malformed => "malformed",
            AttackKind::Oversized => "oversized",
            AttackKind::ConnFlood => "conn-flood",
            AttackKind::TcpFrag => "tcp-frag",
        }
    }

    pub fn from_name(name: &str) -> Option<AttackKind> {
        AttackKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Held kinds share one polling thread; the others take a thread per
    /// connection (see the crate's doc for why).
    pub fn is_held(self) -> bool {
        matches!(
            self,
            AttackKind::Slowloris | AttackKind::SlowRead | AttackKind::ConnFlood
        )
    }

    /// The most connections this kind accepts.
    pub fn max_connections(self) -> usize {
        if self.is_held() {
            MAX_HELD_CONNECTIONS
        } else {
            MAX_FLOOD_CONNECTIONS
        }
    }

    /// The path requested when neither `--path` nor the URL names one:
    /// slow-read wants a large answer (the contract's `static` offer), the
    /// others any path the server knows.
    pub fn default_path(self) -> &'static str {
        match self {
            AttackKind::SlowRead => "/static/1m",
            AttackKind::TcpFrag => "/blank",
            _ => "/",
        }
    }
}

/// The default pause between two bytes of slowloris and slow-read: short
/// enough to beat a 5 s header timeout, long enough to cost no CPU.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(2);

/// A loopback socket address. The only way to make one is
/// [`LoopbackTarget::new`], which refuses any other address, and the attack
/// loops connect only to this type: no attack leaves the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopbackTarget(SocketAddr);

impl LoopbackTarget {
    pub fn new(addr: SocketAddr) -> Result<LoopbackTarget, PlanError> {
        if is_loopback(addr.ip()) {
            Ok(LoopbackTarget(addr))
        } else {
            Err(PlanError::NotLoopback {
                target: addr.ip().to_string(),
            })
        }
    }

    pub fn addr(self) -> SocketAddr {
        self.0
    }
}

/// 127.0.0.0/8, ::1, and 127.x written as an IPv4-mapped IPv6 address.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// What the caller asks for, as typed (the CLI's stage one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttackRequest {
    pub kind: AttackKind,
    pub url: String,
    pub connections: usize,
    pub duration: Duration,
    /// Slowloris and slow-read: the pause between two bytes.
    pub interval: Option<Duration>,
    /// The path requested; the URL's, else the kind's default.
    pub path: Option<String>,
}

/// A resolved, bounded attack (stage two): what [`crate::run`] takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttackPlan {
    pub kind: AttackKind,
    pub target: LoopbackTarget,
    /// The Host header sent.
    pub host: String,
    /// The path of the requests that carry one (starts with `/`).
    pub path: String,
    /// 1..=`kind.max_connections()`, and within the open-file limit.
    pub connections: usize,
    /// Above zero, at most [`MAX_DURATION`].
    pub duration: Duration,
    /// The pause between two bytes for slowloris and slow-read.
    pub interval: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The URL does not parse.
    #[error(transparent)]
    Url(#[from] netbench_engine::TargetError),
    /// Attacks are cleartext HTTP/1.1.
    #[error("attacks speak cleartext HTTP/1.1; give the server's http:// URL")]
    Tls,
    /// The hard check: attack traffic never leaves the machine.
    #[error(
        "refusing to attack {target}: attacks go only to a loopback address (127.0.0.1, ::1, \
         or a name that resolves only to those); start the server on 127.0.0.1"
    )]
    NotLoopback { target: String },
    #[error("--connections {given} is out of range for {kind}: give 1 to {max}")]
    Connections {
        kind: &'static str,
        given: usize,
        max: usize,
    },
    #[error("--for must be above zero and at most 24h")]
    Duration,
    #[error("--interval must be above zero and shorter than --for")]
    Interval,
    #[error(
        "the path `{0}` must start with `/` and hold no space, control character or \
         non-ASCII byte; percent-encode it"
    )]
    Path(String),
}

impl AttackRequest {
    /// Checks every bound and resolves the target. A host name is resolved
    /// here, once, and refused unless every address it has is loopback.
    pub fn plan(&self) -> Result<AttackPlan, PlanError> {
        let url = parse_url(&self.url)?;
        if url.tls {
            return Err(PlanError::Tls);
        }
        let addr = match &url.host {
            Host::Ip(ip) => SocketAddr::new(*ip, url.port),
            Host::Name(name) => {
                let addrs: Vec<SocketAddr> = (name.as_str(), url.port)
                    .to_socket_addrs()
                    .map_err(|e| netbench_engine::TargetError::Resolve {
                        host: name.clone(),
                        reason: e.to_string(),
                    })?
                    .collect();
                if let Some(away) = addrs.iter().find(|a| !is_loopback(a.ip())) {
                    return Err(PlanError::NotLoopback {
                        target: format!("{name} ({})", away.ip()),
                    });
                }
                *addrs
                    .first()
                    .ok_or_else(|| netbench_engine::TargetError::Resolve {
                        host: name.clone(),
                        reason: "no addresses".to_string(),
                    })?
            }
        };
        let target = LoopbackTarget::new(addr)?;
        self.bounds()?;
        let path = match (&self.path, url.path.as_str()) {
            (Some(p), _) => p.clone(),
            (None, "/") => self.kind.default_path().to_string(),
            (None, p) => p.to_string(),
        };
        if !path.starts_with('/')
            || path
                .bytes()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || b >= 0x80)
        {
            return Err(PlanError::Path(path.escape_debug().to_string()));
        }
        Ok(AttackPlan {
            kind: self.kind,
            target,
            host: url.host_header(),
            path,
            connections: self.connections,
            duration: self.duration,
            interval: self.interval.unwrap_or(DEFAULT_INTERVAL),
        })
    }

    /// The bounds that need no system call.
    fn bounds(&self) -> Result<(), PlanError> {
        let max = self.kind.max_connections();
        if self.connections == 0 || self.connections > max {
            return Err(PlanError::Connections {
                kind: self.kind.name(),
                given: self.connections,
                max,
            });
        }
        if self.duration.is_zero() || self.duration > MAX_DURATION {
            return Err(PlanError::Duration);
        }
        if self
            .interval
            .is_some_and(|i| i.is_zero() || i >= self.duration)
        {
            return Err(PlanError::Interval);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> AttackRequest {
        AttackRequest {
            kind: AttackKind::Slowloris,
            url: url.to_string(),
            connections: 10,
            duration: Duration::from_secs(5),
            interval: None,
            path: None,
        }
    }

    #[test]
    fn loopback_addresses_are_the_only_targets() {
        for url in [
            "http://127.0.0.1:8080/",
            "http://127.9.9.9:1/",
            "http://[::1]:8080/",
            "http://[::ffff:127.0.0.1]:8080/",
            "http://localhost:8080/",
        ] {
            assert!(request(url).plan().is_ok(), "{url}");
        }
        for url in [
            "http://10.0.0.1:8080/",
            "http://192.168.1.1/",
            "http://0.0.0.0:8080/",
            "http://[::]:8080/",
            "http://[2001:db8::1]:80/",
            "http://[::ffff:10.0.0.1]:80/",
            "http://8.8.8.8/",
        ] {
            let err = request(url).plan().unwrap_err();
            assert!(matches!(err, PlanError::NotLoopback { .. }), "{url}: {err}");
            assert!(err.to_string().contains("loopback"));
        }
    }

    #[test]
    fn a_target_is_built_only_from_loopback() {
        assert!(LoopbackTarget::new("127.0.0.1:80".parse().unwrap()).is_ok());
        assert!(LoopbackTarget::new("1.1.1.1:80".parse().unwrap()).is_err());
    }

    #[test]
    fn bounds_are_checked() {
        let mut r = request("http://127.0.0.1:1/");
        r.connections = 0;
        assert!(matches!(r.plan(), Err(PlanError::Connections { .. })));
        r.connections = MAX_HELD_CONNECTIONS + 1;
        assert!(matches!(r.plan(), Err(PlanError::Connections { .. })));
        r.connections = MAX_HELD_CONNECTIONS;
        assert!(r.plan().is_ok());
        r.kind = AttackKind::Malformed;
        assert!(matches!(r.plan(), Err(PlanError::Connections { .. })));
        r.connections = 1;
        r.duration = Duration::ZERO;
        assert_eq!(r.plan(), Err(PlanError::Duration));
        r.duration = MAX_DURATION + Duration::from_secs(1);
        assert_eq!(r.plan(), Err(PlanError::Duration));
        r.duration = Duration::from_secs(2);
        r.interval = Some(Duration::from_secs(2));
        assert_eq!(r.plan(), Err(PlanError::Interval));
        assert_eq!(request("https://127.0.0.1/").plan(), Err(PlanError::Tls));
    }

    #[test]
    fn the_path_comes_from_the_flag_the_url_or_the_kind() {
        let mut r = request("http://127.0.0.1:9/");
        r.kind = AttackKind::SlowRead;
        assert_eq!(r.plan().unwrap().path, "/static/1m");
        r.url = "http://127.0.0.1:9/static/14k".into();
        assert_eq!(r.plan().unwrap().path, "/static/14k");
        r.path = Some("/echo/x".into());
        let plan = r.plan().unwrap();
        assert_eq!(plan.path, "/echo/x");
        assert_eq!(plan.host, "127.0.0.1:9");
        r.path = Some("/a b".into());
        assert!(matches!(r.plan(), Err(PlanError::Path(_))));
        r.path = Some("x".into());
        assert!(matches!(r.plan(), Err(PlanError::Path(_))));
    }

    #[test]
    fn kinds_round_trip_their_names() {
        for k in AttackKind::ALL {
            assert_eq!(AttackKind::from_name(k.name()), Some(k));
        }
        assert_eq!(AttackKind::from_name("ddos"), None);
    }
}
