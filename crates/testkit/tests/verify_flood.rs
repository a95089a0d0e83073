//! Issue 42, item 2: `verify`'s h2, h2c and gRPC checks drive the engine,
//! and against a server that floods PING frames and never reads they
//! reached 3.19 GB before failing. They fail now as soon as the client has
//! more answers owed than a reading peer could be owed, naming `h2_flood`,
//! and the process's peak memory over the whole verify stays within 64 MB
//! of where it started; the gRPC check's reason explains only the kinds
//! that occurred. In a test binary of its own, so no other test's memory
//! is counted.

use std::time::Duration;

use netbench_contract::{verify, CheckStatus, Client, ProtocolTargets, VerifyOptions};
use netbench_testkit::{serve_broken_h2, serve_contract, serve_tls, Flaw, H2Flaw, TlsFlaw};

#[test]
fn protocol_checks_against_a_ping_flood_fail_by_kind_with_flat_memory() {
    let plain = serve_contract(Flaw::None);
    let flood = serve_broken_h2(H2Flaw::PingFlood);
    let grpc = serve_broken_h2(H2Flaw::SettingsFlood);
    let tls = serve_tls(serve_broken_h2(H2Flaw::PingFlood), TlsFlaw::AlpnH2Only);
    let mut opts = VerifyOptions::new(Client::new(plain.addr, Duration::from_secs(5)), 0x42);
    opts.documents = 2;
    opts.protocols = ProtocolTargets {
        tls: Some(tls.addr),
        h2: true,
        h2c: Some(flood.addr),
        grpc: Some(grpc.addr),
        ca: Some(tls.ca_file.clone()),
    };
    let before = rss_bytes();
    let run = std::thread::spawn(move || verify(&opts));
    let mut peak = before;
    while !run.is_finished() {
        peak = peak.max(rss_bytes());
        std::thread::sleep(Duration::from_millis(50));
    }
    let report = run.join().unwrap();
    let growth = peak.max(rss_bytes()).saturating_sub(before);
    assert!(
        growth < 64 << 20,
        "verify grew {} MB under the flood",
        growth >> 20
    );
    for name in ["h2", "h2c", "grpc-compute"] {
        let c = report
            .get(name)
            .unwrap_or_else(|| panic!("{name} did not run"));
        assert_eq!(c.status, CheckStatus::Fail, "{name}: {}", c.reason);
        assert!(c.reason.contains("h2_flood"), "{name}: {}", c.reason);
    }
    // Issue 42 (low): the reason explains only kinds that occurred; here
    // no reply was wrong and no grpc-status came.
    let why = &report.get("grpc-compute").unwrap().reason;
    assert!(
        !why.contains("body:") && !why.contains("grpc_status:"),
        "{why}"
    );
    assert!(why.contains("faster than it read"), "{why}");
}

/// The process's resident memory now, from /proc/self/statm.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    pages * page
}
