//! `--source`: the client's source addresses, and the check that the
//! ephemeral port range does not cap the connections before a run starts.

use std::net::IpAddr;

/// More addresses than any port range could need.
const MAX_SOURCES: u128 = 65_536;

/// `--source`'s addresses, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sources(pub Vec<IpAddr>);

/// `--source`'s value parser.
pub(crate) fn parse_source_arg(s: &str) -> Result<Sources, String> {
    parse_sources(s).map(Sources)
}

/// Every source address must be one this machine has: otherwise each
/// connect from it fails, and the run measures nothing but connect errors.
/// Checked before the run by binding a port on each (released at once).
pub(crate) fn check_local(sources: &[IpAddr]) -> Result<(), String> {
    for &ip in sources {
        if let Err(e) = std::net::TcpListener::bind(std::net::SocketAddr::new(ip, 0)) {
            return Err(format!(
                "--source {ip} is not usable here ({e}); give addresses this machine has \
                 (`ip addr` lists them), such as 127.0.0.1-127.0.0.8 for a local target"
            ));
        }
    }
    Ok(())
}

/// A list of addresses and ranges: `127.0.0.1-127.0.0.8,10.0.0.5`.
pub(crate) fn parse_sources(s: &str) -> Result<Vec<IpAddr>, String> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (first, last) = match item.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (item, item),
        };
        let parse = |a: &str| {
            a.parse::<IpAddr>()
                .map_err(|_| format!("`{a}` is not an IP address (in --source `{s}`)"))
        };
        let (a, b) = (parse(first)?, parse(last)?);
        let (lo, hi) = match (a, b) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(u32::from(a)), u128::from(u32::from(b))),
            (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b)),
            _ => return Err(format!("`{item}` mixes IPv4 and IPv6")),
        };
        if hi < lo {
            return Err(format!("`{item}` ends before it starts"));
        }
        if hi - lo + 1 + out.len() as u128 > MAX_SOURCES {
            return Err(format!(
                "--source `{s}` has more than {MAX_SOURCES} addresses"
            ));
        }
        for n in lo..=hi {
            out.push(match a {
                IpAddr::V4(_) => IpAddr::from((n as u32).to_be_bytes()),
                IpAddr::V6(_) => IpAddr::from(n.to_be_bytes()),
            });
        }
    }
    if out.is_empty() {
        return Err("--source needs at least one address".to_string());
    }
    Ok(out)
}

/// The kernel's ephemeral port range, as a count of ports (`None` if it
/// cannot be read).
pub(crate) fn ephemeral_ports() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut it = text.split_whitespace().map(str::parse::<u64>);
    let (Some(Ok(lo)), Some(Ok(hi))) = (it.next(), it.next()) else {
        return None;
    };
    Some(hi.saturating_sub(lo) + 1)
}

/// Refuses a run whose connections to one address cannot get a port each:
/// every (source, target) pair has at most `ports` of them. Says how many
/// source addresses would do, and on loopback which ones.
pub(crate) fn check_ports(
    connections: u64,
    sources: usize,
    ports: u64,
    target_is_loopback: bool,
) -> Result<(), String> {
    let pairs = sources.max(1) as u64;
    if connections <= pairs * ports {
        return Ok(());
    }
    let needed = connections.div_ceil(ports);
    let hint = if target_is_loopback {
        format!("add --source 127.0.0.1-127.0.0.{needed} (any 127/8 address is this machine)")
    } else {
        format!("give --source {needed} or more addresses of this machine")
    };
    Err(format!(
        "{connections} connections to one address need {needed} source addresses: each gets at most \
         {ports} ports (net.ipv4.ip_local_port_range); {hint}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_lists() {
        let s = parse_sources("127.0.0.1-127.0.0.3, 10.0.0.9").unwrap();
        let text: Vec<String> = s.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["127.0.0.1", "127.0.0.2", "127.0.0.3", "10.0.0.9"]);
        assert_eq!(parse_sources("10.0.0.255-10.0.1.0").unwrap().len(), 2);
        assert_eq!(
            parse_sources("::1").unwrap(),
            vec!["::1".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(parse_sources("fd00::1-fd00::4").unwrap().len(), 4);
    }

    #[test]
    fn bad_lists_are_refused() {
        assert!(parse_sources("").unwrap_err().contains("at least one"));
        assert!(parse_sources("127.0.0.9-127.0.0.1")
            .unwrap_err()
            .contains("before"));
        assert!(parse_sources("127.0.0.1-::1")
            .unwrap_err()
            .contains("mixes"));
        assert!(parse_sources("localhost")
            .unwrap_err()
            .contains("not an IP"));
        assert!(parse_sources("10.0.0.0-10.1.0.0")
            .unwrap_err()
            .contains("more than"));
    }

    #[test]
    fn ports_cap_connections_per_source() {
        assert!(check_ports(28_000, 0, 28_232, true).is_ok());
        let e = check_ports(100_000, 1, 28_232, true).unwrap_err();
        assert!(e.contains("need 4 source addresses"), "{e}");
        assert!(e.contains("--source 127.0.0.1-127.0.0.4"), "{e}");
        assert!(check_ports(100_000, 4, 28_232, true).is_ok());
        let e = check_ports(100_000, 2, 28_232, false).unwrap_err();
        assert!(e.contains("4 or more addresses of this machine"), "{e}");
    }
}
