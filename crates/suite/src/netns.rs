//! Network placement of a scenario's server: on loopback (the default) or
//! in a network namespace of its own (`placement = "netns"`), reached over a
//! veth pair with addresses of its own and Ethernet's MTU, optionally shaped
//! by tc's token bucket filter (`bandwidth = "1gbit"`). This module owns the
//! namespace's whole life: the checks before a run (root, `ip`, `tc`), its
//! creation for one cell with `ip` and `tc`, entering it when the server
//! starts, its deletion when the cell ends, and a guard that deletes it when
//! netbench is killed. Also what each measurement records of the path.

use std::fs::File;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

pub use netbench_records::network::{Bandwidth, NetPlacement, NetworkPath, MTU};

use crate::server::{spawn_guard, Cleanup};

/// The lowest and highest limits a suite may ask for: below 8 kbit/s one
/// 1,500-byte frame takes more than a second and every request times out;
/// above 100 gbit/s tbf's own cost, not the limit, is what would be measured.
const MIN_BANDWIDTH: u64 = 8_000;
const MAX_BANDWIDTH: u64 = 100_000_000_000;

/// `1gbit`, `100mbit`, `500kbit`, `2.5gbit` (as tc writes rates).
pub fn parse_bandwidth(s: &str) -> Result<Bandwidth, String> {
    let text = s.trim().to_ascii_lowercase();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        "" => {
            return Err(format!(
                "`{s}` has no unit; write it as 1gbit, 100mbit or 500kbit"
            ))
        }
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}`; use kbit, mbit or gbit (bits per second, as tc \
                 writes them)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a bandwidth; write it as 1gbit, 100mbit or 500kbit"))?;
    let bits = value * scale;
    if !(bits.is_finite() && (MIN_BANDWIDTH as f64..=MAX_BANDWIDTH as f64).contains(&bits)) {
        return Err(format!("`{s}` is out of range; give 8kbit to 100gbit"));
    }
    Ok(Bandwidth {
        bits_per_s: bits.round() as u64,
    })
}

/// tbf's queue, as the time a packet may wait in it: 10 ms (1.25 MB at
/// 1 gbit/s), a switch port's buffer rather than a bloated one.
const TBF_LATENCY: &str = "10ms";

/// Loopback as this machine has it (its MTU read from sysfs).
pub fn loopback_path() -> NetworkPath {
    let mtu = std::fs::read_to_string("/sys/class/net/lo/mtu")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(65536);
    NetworkPath {
        placement: NetPlacement::Loopback,
        server_addr: Ipv4Addr::LOCALHOST.into(),
        client_addr: Ipv4Addr::LOCALHOST.into(),
        mtu,
        bandwidth: None,
        burst_bytes: None,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// Run netbench as root, or keep the suite's scenarios on loopback.
    #[error("the suite puts servers in network namespaces (placement = \"netns\"), which needs root (uid 0, this is uid {euid}): run netbench as root (sudo), or use placement = \"loopback\"")]
    NotRoot { euid: u32 },
    /// Install iproute2.
    #[error("the suite puts servers in network namespaces (placement = \"netns\"), which needs the `{0}` command: install Debian's iproute2 (`apt-get install iproute2`, or `make server-deps`)")]
    MissingTool(&'static str),
    /// Read the command's message; another program may hold the names.
    #[error("cannot set up network namespace {name}: `{command}` failed: {detail}")]
    Step {
        name: String,
        command: String,
        detail: String,
    },
    /// Delete leftover namespaces (`ip netns list`) or free some of 10.213.0.0/16.
    #[error("no /30 of 10.213.0.0/16 is free for a veth pair: every one is in use on this machine (`ip -4 addr`)")]
    NoSubnet,
}

/// Whether a run may use network namespaces: as root, with `ip` and `tc`
/// found. Pure, so it can be tested without being another user.
pub fn preflight(euid: u32, ip: Option<&Path>, tc: Option<&Path>) -> Result<(), NetnsError> {
    if euid != 0 {
        return Err(NetnsError::NotRoot { euid });
    }
    if ip.is_none() {
        return Err(NetnsError::MissingTool("ip"));
    }
    if tc.is_none() {
        return Err(NetnsError::MissingTool("tc"));
    }
    Ok(())
}

/// Where `ip` and `tc` are.
struct Tools {
    ip: PathBuf,
    tc: PathBuf,
}

/// A program on PATH, or in the sbin folders a user's PATH often lacks.
fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn tools() -> Result<Tools, NetnsError> {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    let (ip, tc) = (find_tool("ip"), find_tool("tc"));
    preflight(euid, ip.as_deref(), tc.as_deref())?;
    Ok(Tools {
        ip: ip.unwrap_or_default(),
        tc: tc.unwrap_or_default(),
    })
}

/// Checks, before a run starts, that it can create namespaces.
pub fn check_usable() -> Result<(), NetnsError> {
    tools().map(|_| ())
}

/// The /30s of 10.213.0.0/16, numbered 0 to 16,383: a private range that a
/// LAN seldom uses, tried from `start` on, skipping any whose addresses are
/// already on an interface here (another netbench's, or the machine's).
/// Returns the host's end and the server's.
fn pick_subnet(start: u32, used: &[Ipv4Addr]) -> Option<(Ipv4Addr, Ipv4Addr)> {
    const SUBNETS: u32 = 1 << 14;
    (0..SUBNETS)
        .map(|i| (start.wrapping_add(i)) % SUBNETS)
        .map(|i| {
            let base = u32::from(Ipv4Addr::new(10, 213, 0, 0)) + i * 4;
            (Ipv4Addr::from(base + 1), Ipv4Addr::from(base + 2))
        })
        .find(|(host, server)| !used.contains(host) && !used.contains(server))
}

/// The IPv4 addresses on this namespace's interfaces, from `ip -4 -o addr`.
fn used_addresses(ip: &Path) -> Vec<Ipv4Addr> {
    let Ok(out) = Command::new(ip).args(["-4", "-o", "addr", "show"]).output() else {
        return Vec::new();
    };
    parse_addresses(&String::from_utf8_lossy(&out.stdout))
}

fn parse_addresses(text: &str) -> Vec<Ipv4Addr> {
    text.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            words.find(|w| *w == "inet")?;
            words.next()?.split('/').next()?.parse().ok()
        })
        .collect()
}

/// Numbers the namespaces of this process: with the pid, a unique name.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// A network namespace with the server's end of a veth pair in it. Dropping
/// it deletes both.
pub struct Namespace {
    /// `nb-<pid>-<n>`; the namespace's file is /run/netns/<name>.
    pub name: String,
    /// The veth end in this namespace (`nb<pid>h<n>`, within the 15
    /// characters an interface name may have).
    host_if: String,
    ip: PathBuf,
    /// What the measurement records.
    pub path: NetworkPath,
    /// Deletes the namespace if netbench dies before it does.
    guard: Option<Child>,
}

impl Namespace {
    /// Creates a namespace, a veth pair between it and this namespace with
    /// a /30 of its own and MTU 1500 on both ends, `lo` up inside, and with
    /// `bandwidth` a tbf on both ends' egress (so requests and answers are
    /// each limited, as on a full-duplex link).
    pub fn create(bandwidth: Option<Bandwidth>) -> Result<Namespace, NetnsError> {
        let tools = tools()?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let name = format!("nb-{pid}-{n}");
        let host_if = format!("nb{pid}h{}", n % 100_000);
        let (host_addr, server_addr) = pick_subnet(
            pid.wrapping_mul(64).wrapping_add(n),
            &used_addresses(&tools.ip),
        )
        .ok_or(NetnsError::NoSubnet)?;
        // The guard first: a netbench killed between any two of the steps
        // below still leaves nothing behind (deleting what is not there is
        // harmless).
        let guard = spawn_guard(
            None,
            None,
            Cleanup::Namespace {
                ip: &tools.ip,
                name: &name,
                host_if: &host_if,
            },
        );
        let ns = Namespace {
            name: name.clone(),
            host_if: host_if.clone(),
            ip: tools.ip.clone(),
            path: NetworkPath {
                placement: NetPlacement::Netns,
                server_addr: server_addr.into(),
                client_addr: host_addr.into(),
                mtu: MTU,
                bandwidth,
                burst_bytes: bandwidth.map(Bandwidth::burst_bytes),
            },
            guard,
        };
        let mtu = MTU.to_string();
        let (host_cidr, server_cidr) = (format!("{host_addr}/30"), format!("{server_addr}/30"));
        ns.step(&tools.ip, &["netns", "add", &name])?;
        // The peer is made inside the namespace, so its name (eth0) cannot
        // meet another in this one.
        ns.step(
            &tools.ip,
            &[
                "link", "add", &host_if, "mtu", &mtu, "type", "veth", "peer", "name", "eth0",
                "mtu", &mtu, "netns", &name,
            ],
        )?;
        ns.step(&tools.ip, &["addr", "add", &host_cidr, "dev", &host_if])?;
        ns.step(&tools.ip, &["link", "set", &host_if, "up"])?;
        ns.step(
            &tools.ip,
            &["-n", &name, "addr", "add", &server_cidr, "dev", "eth0"],
        )?;
        ns.step(&tools.ip, &["-n", &name, "link", "set", "eth0", "up"])?;
        ns.step(&tools.ip, &["-n", &name, "link", "set", "lo", "up"])?;
        if let Some(b) = bandwidth {
            let (rate, burst) = (b.to_string(), b.burst_bytes().to_string());
            let tbf = [
                "root",
                "tbf",
                "rate",
                &rate,
                "burst",
                &burst,
                "latency",
                TBF_LATENCY,
            ];
            let host: Vec<&str> = ["qdisc", "add", "dev", &host_if]
                .into_iter()
                .chain(tbf)
                .collect();
            let inside: Vec<&str> = ["-n", &name, "qdisc", "add", "dev", "eth0"]
                .into_iter()
                .chain(tbf)
                .collect();
            ns.step(&tools.tc, &host)?;
            ns.step(&tools.tc, &inside)?;
        }
        Ok(ns)
    }

    /// The namespace's file, which a process joins with setns.
    pub fn file(&self) -> PathBuf {
        Path::new("/run/netns").join(&self.name)
    }

    fn step(&self, program: &Path, args: &[&str]) -> Result<(), NetnsError> {
        let failed = |detail: String| NetnsError::Step {
            name: self.name.clone(),
            command: format!(
                "{} {}",
                program.file_name().unwrap_or_default().to_string_lossy(),
                args.join(" ")
            ),
            detail,
        };
        let out = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| failed(e.to_string()))?;
        if out.status.success() {
            return Ok(());
        }
        Err(failed(format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }

    /// Deletes the veth pair (its host end takes the other with it at once;
    /// a namespace's own clean-up would free it later) and the namespace.
    fn delete(&mut self) {
        let quiet = |args: &[&str]| {
            let _ = Command::new(&self.ip)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        };
        quiet(&["link", "del", &self.host_if]);
        quiet(&["netns", "del", &self.name]);
        // After the deletion: the guard must not outlive its namespace, and
        // until now it covered a netbench killed half-way through.
        if let Some(mut guard) = self.guard.take() {
            let _ = guard.kill();
            let _ = guard.wait();
        }
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        self.delete();
    }
}

/// Makes `cmd` start inside the namespace whose file `ns` is open: setns
/// between fork and exec, after the caller's own pre_exec steps (process
/// group, CPU affinity). `ns` must stay open until `cmd` is spawned.
pub(crate) fn enter(cmd: &mut Command, ns: &File) {
    let fd = ns.as_raw_fd();
    // SAFETY: setns is a plain system call, async-signal-safe; the file
    // descriptor stays open across the spawn (the caller holds the file),
    // and closes at exec (Rust opens files close-on-exec).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidths_in_tcs_units() {
        let bits = |s: &str| parse_bandwidth(s).map(|b| b.bits_per_s);
        assert_eq!(bits("1gbit"), Ok(1_000_000_000));
        assert_eq!(bits(" 100mbit "), Ok(100_000_000));
        assert_eq!(bits("2.5Gbit"), Ok(2_500_000_000));
        assert_eq!(bits("500kbit"), Ok(500_000));
        for (bad, why) in [
            ("1gbps", "unknown unit `gbps`"),
            ("1 gigabit", "unknown unit `gigabit`"),
            ("1000", "no unit"),
            ("gbit", "not a bandwidth"),
            ("1.2.3mbit", "not a bandwidth"),
            ("0gbit", "out of range"),
            ("1kbit", "out of range"),
            ("101gbit", "out of range"),
        ] {
            let err = parse_bandwidth(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert_eq!(parse_bandwidth("1gbit").unwrap().to_string(), "1gbit");
        assert_eq!(parse_bandwidth("1.5gbit").unwrap().to_string(), "1500mbit");
        assert_eq!(parse_bandwidth("8kbit").unwrap().to_string(), "8kbit");
        assert_eq!(Bandwidth { bits_per_s: 8_001 }.to_string(), "8001bit");
    }

    #[test]
    fn the_bucket_holds_a_gso_packet_and_a_millisecond() {
        let b = |s: &str| parse_bandwidth(s).unwrap().burst_bytes();
        assert_eq!(b("1gbit"), 125_000);
        assert_eq!(b("10gbit"), 1_250_000);
        assert_eq!(b("100mbit"), 65_536 + 1500);
    }

    #[test]
    fn only_root_with_ip_and_tc_may_use_namespaces() {
        let (ip, tc) = (Path::new("/usr/sbin/ip"), Path::new("/usr/sbin/tc"));
        assert!(preflight(0, Some(ip), Some(tc)).is_ok());
        let not_root = preflight(1000, Some(ip), Some(tc)).unwrap_err().to_string();
        assert!(
            not_root.contains("needs root") && not_root.contains("uid 1000"),
            "{not_root}"
        );
        assert!(!not_root.contains('\n'), "one line: {not_root}");
        // Not root is said first: installing iproute2 would not be enough.
        assert!(matches!(
            preflight(1000, None, None),
            Err(NetnsError::NotRoot { .. })
        ));
        let no_ip = preflight(0, None, Some(tc)).unwrap_err().to_string();
        assert!(
            no_ip.contains("`ip`") && no_ip.contains("iproute2"),
            "{no_ip}"
        );
        let no_tc = preflight(0, Some(ip), None).unwrap_err().to_string();
        assert!(no_tc.contains("`tc`"), "{no_tc}");
    }

    #[test]
    fn subnets_are_private_30s_that_skip_addresses_in_use() {
        let (h, s) = pick_subnet(0, &[]).unwrap();
        assert_eq!(
            (h, s),
            (Ipv4Addr::new(10, 213, 0, 1), Ipv4Addr::new(10, 213, 0, 2))
        );
        let (h, _) = pick_subnet(64, &[]).unwrap();
        assert_eq!(h, Ipv4Addr::new(10, 213, 1, 1));
        // The last one wraps round to the first.
        let (h, _) = pick_subnet(16_383, &[Ipv4Addr::new(10, 213, 255, 254)]).unwrap();
        assert_eq!(h, Ipv4Addr::new(10, 213, 0, 1));
        let used = parse_addresses(
            "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n\
             7: nb1h0    inet 10.213.0.1/30 scope global nb1h0\\       valid_lft forever\n",
        );
        assert_eq!(used, [Ipv4Addr::LOCALHOST, Ipv4Addr::new(10, 213, 0, 1)]);
        let (h, s) = pick_subnet(0, &used).unwrap();
        assert_eq!(
            (h, s),
            (Ipv4Addr::new(10, 213, 0, 5), Ipv4Addr::new(10, 213, 0, 6))
        );
    }

    #[test]
    fn paths_describe_themselves() {
        let veth = NetworkPath {
            placement: NetPlacement::Netns,
            server_addr: Ipv4Addr::new(10, 213, 0, 2).into(),
            client_addr: Ipv4Addr::new(10, 213, 0, 1).into(),
            mtu: MTU,
            bandwidth: parse_bandwidth("1gbit").ok(),
            burst_bytes: Some(125_000),
        };
        assert_eq!(
            veth.describe(),
            "server in a network namespace over a veth pair, MTU 1500, tbf 1gbit"
        );
        let lo = loopback_path();
        assert_eq!(lo.placement, NetPlacement::Loopback);
        assert!(lo.describe().starts_with("server on loopback, MTU "));
        assert_eq!(NetPlacement::parse("netns"), Some(NetPlacement::Netns));
        assert_eq!(NetPlacement::parse("veth"), None);
    }
}
