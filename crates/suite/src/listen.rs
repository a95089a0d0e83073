//! Which addresses a server listens on, read from the kernel's socket
//! tables (`/proc/<pid>/net/tcp` and `tcp6`, of the server's own network
//! namespace) and the socket inodes of its process tree: the contract says
//! a server binds HOST, and one bound to every address (0.0.0.0 or ::) is
//! reachable from the network while it is measured.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

/// One listening TCP socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listener {
    pub addr: SocketAddr,
    pub inode: u64,
}

/// The listening sockets in the tables under `net` (`/proc/self/net`,
/// `/proc/<pid>/net`); none when they cannot be read.
pub fn listeners(net: &Path) -> Vec<Listener> {
    let mut found = Vec::new();
    for (file, v6) in [("tcp", false), ("tcp6", true)] {
        let Ok(text) = std::fs::read_to_string(net.join(file)) else {
            continue;
        };
        found.extend(text.lines().skip(1).filter_map(|l| parse_line(l, v6)));
    }
    found
}

/// Every address of the machine listened on at `port`, in this process's
/// network namespace: what `netbench verify` warns about.
pub fn wildcard_on_port(port: u16) -> Vec<SocketAddr> {
    listeners(Path::new("/proc/self/net"))
        .into_iter()
        .map(|l| l.addr)
        .filter(|a| a.port() == port && a.ip().is_unspecified())
        .collect()
}

/// The socket inodes that the processes `pids` hold open.
pub(crate) fn socket_inodes(pids: impl IntoIterator<Item = i32>) -> HashSet<u64> {
    let mut inodes = HashSet::new();
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let target = target.to_string_lossy();
            if let Some(n) = target
                .strip_prefix("socket:[")
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|t| t.parse().ok())
            {
                inodes.insert(n);
            }
        }
    }
    inodes
}

/// A row of /proc/net/tcp{,6} in state LISTEN (0A): its local address and
/// inode. Addresses are hex words in the kernel's byte order.
fn parse_line(line: &str, v6: bool) -> Option<Listener> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.get(3)? != &"0A" {
        return None;
    }
    let (ip, port) = f.get(1)?.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        Some(
            u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16)
                .ok()?
                .to_ne_bytes(),
        )
    };
    let ip = if v6 {
        let mut bytes = [0u8; 16];
        for i in 0..4 {
            bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
        }
        IpAddr::V6(Ipv6Addr::from(bytes))
    } else {
        IpAddr::V4(Ipv4Addr::from(word(0)?))
    };
    Some(Listener {
        addr: SocketAddr::new(ip, port),
        inode: f.get(9)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_endian = "little")]
    fn rows_of_the_kernel_tables() {
        let v4 = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 100 0 0 10 0";
        assert_eq!(
            parse_line(v4, false),
            Some(Listener {
                addr: "127.0.0.1:8080".parse().unwrap(),
                inode: 12345
            })
        );
        let any = "   1: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7 1";
        assert!(parse_line(any, false).unwrap().addr.ip().is_unspecified());
        let established = any.replace(" 0A ", " 01 ");
        assert_eq!(parse_line(&established, false), None);
        let v6 = "   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1";
        assert_eq!(
            parse_line(v6, true).unwrap().addr,
            "[::1]:8080".parse().unwrap()
        );
    }

    #[test]
    fn a_socket_of_this_process_is_found_with_its_inode() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let ours = socket_inodes([std::process::id() as i32]);
        let found: Vec<Listener> = listeners(Path::new("/proc/self/net"))
            .into_iter()
            .filter(|x| x.addr.port() == port)
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(ours.contains(&found[0].inode));
        assert!(wildcard_on_port(port).is_empty());
    }
}
