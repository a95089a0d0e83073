//! The listeners of contract 1.5 a server opens beside `PORT` (CONTRACT.md,
//! "tls, h2, h2c, grpc"): a free port for each one its manifest offers,
//! chosen for one start and given as `TLS_PORT`, `H2C_PORT` and
//! `GRPC_PORT`, and the port a scenario's protocol reaches it on.

use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use netbench_contract::{ProtocolTargets, VerifyOptions};
use netbench_records::{Offer, Protocol};

use crate::manifest::ServerManifest;
use crate::server::free_port;

/// The extra ports of one server start; `None` for what it does not offer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Listeners {
    pub tls: Option<u16>,
    pub h2c: Option<u16>,
    pub grpc: Option<u16>,
}

impl Listeners {
    /// A free port for each listener `manifest` offers.
    pub fn for_manifest(manifest: &ServerManifest) -> io::Result<Listeners> {
        let port = |offer: Offer| -> io::Result<Option<u16>> {
            manifest.offers(offer).then(free_port).transpose()
        };
        Ok(Listeners {
            tls: port(Offer::Tls)?,
            h2c: port(Offer::H2c)?,
            grpc: port(Offer::Grpc)?,
        })
    }

    /// The server's environment naming them.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("TLS_PORT", self.tls),
            ("H2C_PORT", self.h2c),
            ("GRPC_PORT", self.grpc),
        ]
        .into_iter()
        .filter_map(|(name, port)| port.map(|p| (name.to_string(), p.to_string())))
        .collect()
    }

    /// Every extra port, for the wait until each one accepts.
    pub fn ports(&self) -> Vec<u16> {
        [self.tls, self.h2c, self.grpc]
            .into_iter()
            .flatten()
            .collect()
    }

    /// The port `protocol` reaches the server on, `plain` being `PORT`;
    /// None when the server opened no listener for it.
    pub fn port_for(&self, protocol: Protocol, plain: u16) -> Option<u16> {
        match protocol {
            Protocol::H1 => Some(plain),
            Protocol::Tls | Protocol::H2 => self.tls,
            Protocol::H2c => self.h2c,
            Protocol::Grpc => self.grpc,
        }
    }
}

/// Waits until each of `ports` on `host` accepts a TCP connection (a
/// server may open its TLS or gRPC listener a moment after `PORT`), until
/// `deadline` has passed or `exited` says the process is gone.
pub fn wait_accepting(
    host: IpAddr,
    ports: &[u16],
    deadline: Duration,
    mut exited: impl FnMut() -> bool,
) -> Result<(), String> {
    let began = Instant::now();
    for &port in ports {
        let addr = SocketAddr::new(host, port);
        loop {
            let left = deadline.saturating_sub(began.elapsed());
            if TcpStream::connect_timeout(
                &addr,
                left.clamp(Duration::from_millis(1), Duration::from_millis(200)),
            )
            .is_ok()
            {
                break;
            }
            if exited() {
                return Err(format!("the server exited before it listened on {addr}"));
            }
            if began.elapsed() > deadline {
                return Err(format!(
                    "the server answered on PORT but nothing accepted on {addr} within {deadline:?}: open each listener the contract's TLS_PORT, H2C_PORT and GRPC_PORT name"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Ok(())
}

/// Asks `verify` for the checks of the listeners `manifest` offers, at
/// `host` on the ports of `listeners`, trusting the authority `ca`.
pub fn ask_for_listeners(
    options: &mut VerifyOptions,
    manifest: &ServerManifest,
    listeners: &Listeners,
    host: IpAddr,
    ca: Option<&Path>,
) {
    let at = |port: Option<u16>| port.map(|p| SocketAddr::new(host, p));
    options.protocols = ProtocolTargets {
        tls: at(listeners.tls),
        h2: manifest.offers(Offer::H2),
        h2c: at(listeners.h2c),
        grpc: at(listeners.grpc),
        ca: ca.map(Path::to_path_buf),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_offer_gets_a_port_of_its_own_and_a_protocol_finds_it() {
        let head = "name = \"p\"\nlanguage = \"Go\"\nframework = \"x\"\ndescription = \"d\"\nmodel = \"event-loop\"\nrun = \"x\"\n";
        let m = crate::manifest::parse_manifest(
            std::path::Path::new("servers/p/server.toml"),
            "p",
            &format!("{head}offers = [\"tls\", \"h2\", \"grpc\"]\n"),
        )
        .unwrap();
        let l = Listeners::for_manifest(&m).unwrap();
        let (tls, grpc) = (l.tls.unwrap(), l.grpc.unwrap());
        assert_eq!(l.h2c, None);
        assert_ne!(tls, grpc);
        let env = l.env();
        assert!(env.contains(&("TLS_PORT".to_string(), tls.to_string())));
        assert!(env.contains(&("GRPC_PORT".to_string(), grpc.to_string())));
        assert!(env.iter().all(|(k, _)| k != "H2C_PORT"));
        assert_eq!(l.port_for(Protocol::H2, 80), Some(tls));
        assert_eq!(l.port_for(Protocol::H1, 80), Some(80));
        assert_eq!(l.port_for(Protocol::H2c, 80), None);
        assert_eq!(l.ports().len(), 2);
    }
}
