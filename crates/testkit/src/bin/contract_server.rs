//! netbench-contract-server: a contract server for tests of `netbench run`,
//! listening on HOST and PORT like every server, and misbehaving on request:
//! a chosen contract flaw, a crash after N requests, never getting ready, or
//! refusing connections after N.

use std::net::TcpListener;
use std::time::Duration;

use netbench_testkit::{run_contract_server, Flaw};

const USAGE: &str = "usage: netbench-contract-server [--flaw NAME] [--crash-after N] [--never-ready] [--close-listener-after N] [--spin] [--burn-ns N] [--tag TEXT]\n\
  --flaw NAME       none (default), canned-work, cached-work, wrong-content-type, no-date, stuck-date, late-date-tick (not a flaw:\n\
                    a Date refreshed every 2 s), lax-dates, cached-db,\n\
                    ws-fixed-payload (WebSocket echoes of the right length, always `x`),\n\
                    static-truncated, static-no-304, static-wrong-length, upload-wrong-digest,\n\
                    upload-early, upload-no-limit, gzip-claim-plain, gzip-unasked, gzip-bomb;\n\
                    HTTP/1.1 conformance flaws (verify --conformance-only fails them): lax-framing,\n\
                    lax-headers, crlf-only, lax-host, lax-request-line, strict-request-line,\n\
                    no-header-limit, keeps-open, http10-chunked, no-100-continue, continue-http10,\n\
                    pipeline-reorder, head-body, lax-chunks, chunk-ext-rejected\n\
  --crash-after N   exit with status 3 after N requests\n\
  --never-ready     never listen (for readiness timeouts)\n\
  --close-listener-after N\n\
                    close the listener after N connections, so later connects are refused\n\
  --spin            keep one thread busy without end, idle or not (a server that spins while it waits)\n\
  --burn-ns N       spend N ns more of a thread's CPU on every request (a planted slowdown)\n\
  --tag TEXT        ignored; lets tests find this process\n\
The db endpoints read the database at DATABASE_URL (CONTRACT.md, \"db\").";

fn fail(msg: &str) -> ! {
    eprintln!("netbench-contract-server: {msg}\n{USAGE}");
    std::process::exit(2)
}

fn main() {
    let mut flaw = Flaw::None;
    let mut crash_after = None;
    let mut never_ready = false;
    let mut accept_limit = None;
    let mut burn = Duration::ZERO;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| fail(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--flaw" => {
                let name = value();
                flaw = Flaw::from_name(&name)
                    .unwrap_or_else(|| fail(&format!("unknown flaw `{name}`")));
            }
            "--crash-after" => {
                crash_after = Some(
                    value()
                        .parse()
                        .unwrap_or_else(|_| fail("--crash-after takes a number")),
                )
            }
            "--never-ready" => never_ready = true,
            "--spin" => {
                std::thread::spawn(|| {
                    let mut x = 0u64;
                    loop {
                        x = std::hint::black_box(x.wrapping_add(1));
                    }
                });
            }
            "--close-listener-after" => {
                accept_limit = Some(
                    value()
                        .parse()
                        .unwrap_or_else(|_| fail("--close-listener-after takes a number")),
                )
            }
            "--burn-ns" => {
                burn = Duration::from_nanos(
                    value()
                        .parse()
                        .unwrap_or_else(|_| fail("--burn-ns takes a number of nanoseconds")),
                )
            }
            "--tag" => {
                value();
            }
            other => fail(&format!("unknown argument `{other}`")),
        }
    }
    if never_ready {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    let host = std::env::var("HOST").unwrap_or_else(|_| "127.0.0.1".into());
    let port = std::env::var("PORT").unwrap_or_else(|_| "1234".into());
    let listener = TcpListener::bind(format!("{host}:{port}"))
        .unwrap_or_else(|e| fail(&format!("cannot listen on {host}:{port}: {e}")));
    let database_url = std::env::var("DATABASE_URL").ok();
    run_contract_server(
        listener,
        flaw,
        crash_after,
        accept_limit,
        database_url,
        burn,
    )
}
