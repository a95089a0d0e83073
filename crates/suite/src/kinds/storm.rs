//! The storm kind: every client connects at once and sends one request
//! (an engine plan without reconnects), with what the kernel says about the
//! server's listen queue before and during it.

use std::time::Duration;

use netbench_engine::{ErrorKind, LoadPlan, Pacing, Stop, WsPlan};

use super::engine_run::{from_result, measure_plan, Measure, Measured};
use super::facts::{Facts, StormFacts};

/// A connect or answer slower than this fails: long enough for the SYN
/// retransmits (after 1 s and 3 s) that a full listen queue causes.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A storm of `clients`, each sending one request, or with `ws` upgrading
/// and echoing one message (the seed's "connect 3,000 clients and echo one
/// message"), its connection then left open until every client is done.
pub(crate) fn measure_storm(
    clients: u32,
    ws: Option<WsPlan>,
    m: &Measure<'_>,
) -> Result<Measured, String> {
    let plan = LoadPlan {
        sources: Vec::new(),
        io: m.io,
        addr: m.addr,
        connections: clients as usize,
        workers: m.workers.clamp(1, clients as usize),
        stop: Stop::Count(u64::from(clients)),
        pacing: Pacing::Closed,
        warmup: Duration::ZERO,
        timeout: TIMEOUT,
        // An HTTP/1.1 client says it will close, as ab does; a WebSocket is
        // a kept connection by nature, and HTTP/2 has no Connection header
        // (each client still sends its one request and is done).
        keepalive: ws.is_some() || m.carrier.h2,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: false,
        // Each client sends one request on its own connection: a page of
        // the app makes a new session, checked as a page, with no session
        // to follow.
        requests: m.traffic.requests.clone(),
        ws,
        // Over TLS every client makes its handshake (a full one, or a
        // resumed one with `tls_resume`): the storm of handshakes.
        tls: m.carrier.tls.clone(),
        session: None,
        h2: m.carrier.h2,
    };
    let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok());
    let listen_backlog = listen_backlog(m.addr.port(), m.netns);
    // The server's own namespace's counters: the machine's on loopback.
    let before = listen_counters(m.pgid);
    let (result, cpu, from) = measure_plan(&plan, m)?;
    let after = listen_counters(m.pgid);
    let connect_errors = result.errors.get(ErrorKind::Connect);
    let facts = StormFacts {
        clients,
        answered: result.requests,
        refused: connect_errors.saturating_sub(result.connect_timeouts),
        connect_timeouts: result.connect_timeouts,
        other_errors: result.errors.total() - connect_errors,
        all_done_s: result.duration_s,
        connects_per_s: if result.duration_s > 0.0 {
            result.connects as f64 / result.duration_s
        } else {
            0.0
        },
        connect: result.connect,
        somaxconn,
        listen_backlog,
        listen_overflows: before.zip(after).map(|(a, b)| b.0.saturating_sub(a.0)),
        listen_drops: before.zip(after).map(|(a, b)| b.1.saturating_sub(a.1)),
        // The engine judges a plan without reconnects by the client's core
        // and loop alone: a storm's connections end one by one by design.
        client_bound: result.verdict.client_bound,
    };
    Ok(from_result(result, cpu, from, Some(Facts::Storm(facts))))
}

/// The listen backlog the kernel holds for the sockets listening on `port`
/// (summed over SO_REUSEPORT listeners), from `ss` (in the server's network
/// namespace `netns` when given): the Send-Q of a listening socket is its
/// backlog. None when ss is missing or finds none.
fn listen_backlog(port: u16, netns: Option<&str>) -> Option<u32> {
    let mut ss = std::process::Command::new("ss");
    if let Some(name) = netns {
        ss.args(["-N", name]);
    }
    let out = ss
        .args(["-Hltn", &format!("sport = :{port}")])
        .output()
        .ok()?;
    parse_backlogs(&String::from_utf8_lossy(&out.stdout))
}

fn parse_backlogs(text: &str) -> Option<u32> {
    let backlogs: Vec<u32> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2)?.parse().ok())
        .collect();
    (!backlogs.is_empty()).then(|| backlogs.iter().sum())
}

/// The TCP ListenOverflows and ListenDrops counters of the network
/// namespace process `pid` is in.
fn listen_counters(pid: i32) -> Option<(u64, u64)> {
    parse_netstat(&std::fs::read_to_string(format!("/proc/{pid}/net/netstat")).ok()?)
}

fn parse_netstat(text: &str) -> Option<(u64, u64)> {
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let names: Vec<&str> = lines.next()?.split_whitespace().collect();
    let values: Vec<&str> = lines.next()?.split_whitespace().collect();
    let get = |name: &str| -> Option<u64> {
        let i = names.iter().position(|n| *n == name)?;
        values.get(i)?.parse().ok()
    };
    Some((get("ListenOverflows")?, get("ListenDrops")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_backlogs_and_listen_counters() {
        let ss = "LISTEN 0      4096       127.0.0.1:8080      0.0.0.0:*\n\
                  LISTEN 0      511        127.0.0.1:8080      0.0.0.0:*\n";
        assert_eq!(parse_backlogs(ss), Some(4607));
        assert_eq!(parse_backlogs(""), None);
        let netstat = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\n\
                       TcpExt: 0 12 15\n\
                       IpExt: InNoRoutes\nIpExt: 0\n";
        assert_eq!(parse_netstat(netstat), Some((12, 15)));
        assert_eq!(parse_netstat("IpExt: a\nIpExt: 1\n"), None);
    }
}
