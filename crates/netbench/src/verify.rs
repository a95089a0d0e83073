//! `netbench verify`: resolve the URL, run the contract checks (and the
//! conformance probes when asked, or those alone), print them.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};

use anyhow::{bail, Context, Result};
use netbench_contract::{
    conformance, verify, Client, ConformanceOptions, ProtocolTargets, VerifyOptions,
};
use netbench_engine::parse_url;
use netbench_report::{conformance_json, verify_json, write_conformance_text, write_verify_text};

use crate::cli::VerifyArgs;
use crate::seed::fresh_seed;

/// Exit codes of `verify`.
const ALL_PASSED: u8 = 0;
const SOME_FAILED: u8 = 1;

pub(crate) fn run(args: VerifyArgs) -> Result<u8> {
    let url = parse_url(&args.url)?;
    if url.tls {
        bail!(
            "verify checks the contract over cleartext HTTP/1.1; give the server's http:// URL \
             (`netbench load` takes https://)"
        );
    }
    if url.path.contains('?') {
        bail!("the URL has a query string; give the server's base URL, as http://host:port/");
    }
    let addr = url.resolve()?;
    if args.conformance_only {
        let path = args.path.clone().unwrap_or_else(|| url.path.clone());
        return conformance_only(&args, addr, url.host_header(), path);
    }
    let mut client = Client::new(addr, args.timeout);
    client.host = url.host_header();
    let mut opts = VerifyOptions::new(client, args.seed.unwrap_or_else(fresh_seed));
    opts.prefix = url.path.trim_end_matches('/').to_string();
    opts.documents = args.documents as usize;
    opts.database_url = args.database_url.clone();
    opts.ws = args.ws;
    opts.static_files = args.static_files;
    opts.upload = args.upload;
    opts.json_comp = args.json_comp;
    opts.fortunes = args.fortunes;
    opts.queries = args.queries;
    opts.updates = args.updates;
    opts.app = args.app;
    let at = |port: u16| std::net::SocketAddr::new(addr.ip(), port);
    opts.protocols = ProtocolTargets {
        tls: args.tls_port.map(at),
        h2: args.h2,
        h2c: args.h2c_port.map(at),
        grpc: args.grpc_port.map(at),
        ca: args.cacert.clone(),
    };
    opts.conformance = args.conformance;
    let report = verify(&opts);
    // The contract says HOST: a server on every address is reachable from
    // the network. Only this machine's sockets can be seen.
    if addr.ip().is_loopback() {
        for any in netbench_suite::listen::wildcard_on_port(addr.port()) {
            eprintln!(
                "netbench: warning: port {} is listened on at {any}, every address of this \
                 machine, not only at {}: the contract says bind to HOST; `netbench run` \
                 leaves such a server out",
                addr.port(),
                addr.ip()
            );
        }
    }

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &verify_json(&args.url, &report))?;
        writeln!(out)?;
    } else {
        write_verify_text(&mut out, &args.url, &report)?;
    }
    out.flush()?;
    Ok(if report.ok() { ALL_PASSED } else { SOME_FAILED })
}

/// `--conformance-only`: the probes alone, against any HTTP/1.1 server. A
/// score, not a verdict: exit 0 whatever it is.
fn conformance_only(args: &VerifyArgs, addr: SocketAddr, host: String, path: String) -> Result<u8> {
    let path = if path.is_empty() {
        "/".to_string()
    } else {
        path
    };
    if !path.starts_with('/')
        || path
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        bail!("--path {path:?}: give an origin-form path that starts with / and has no spaces, as /index.html");
    }
    // One connection first, so a server that is not there is one clear
    // error and not every case failing on it.
    TcpStream::connect_timeout(&addr, args.timeout)
        .with_context(|| format!("cannot connect to {addr}: is the server running there?"))?;
    let mut opts = ConformanceOptions::new(addr, host, path);
    opts.timeout = args.timeout;
    let report = conformance(&opts);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        serde_json::to_writer_pretty(
            &mut out,
            &conformance_json(&args.url, &opts.target.path, &report),
        )?;
        writeln!(out)?;
    } else {
        write_conformance_text(&mut out, &args.url, &opts.target.path, &report)?;
    }
    out.flush()?;
    Ok(ALL_PASSED)
}
