//! Contract 1.5 end to end (issue 32): `verify`'s tls, h2, h2c and grpc
//! checks against the contract server's listeners, right and with one flaw
//! each: canned gRPC replies, a server that never refuses a call, TLS
//! without h2, and an "h2c" port that speaks HTTP/1.1 each fail the check
//! that names them and leave the others passing. Counts and reasons only.

use std::time::Duration;

use netbench_contract::{
    verify, CheckStatus, Client, ProtocolTargets, VerifyOptions, VerifyReport,
};
use netbench_testkit::{serve_protocols, ProtocolFlaw};

const CHECKS: [&str; 5] = ["tls", "h2", "h2c", "grpc-compute", "grpc-invalid"];

fn verify_protocols(flaw: ProtocolFlaw) -> VerifyReport {
    let s = serve_protocols(flaw);
    let mut opts = VerifyOptions::new(Client::new(s.plain.addr, Duration::from_secs(5)), 0x15);
    opts.documents = 2;
    opts.protocols = ProtocolTargets {
        tls: Some(s.tls),
        h2: true,
        h2c: Some(s.h2c),
        grpc: Some(s.grpc),
        ca: Some(s.ca_file.clone()),
    };
    verify(&opts)
}

fn status(report: &VerifyReport, name: &str) -> (CheckStatus, String) {
    let c = report
        .get(name)
        .unwrap_or_else(|| panic!("{name} was not run: {:?}", report.checks));
    (c.status, c.reason.clone())
}

#[test]
fn a_correct_server_passes_every_protocol_check() {
    let report = verify_protocols(ProtocolFlaw::None);
    for name in CHECKS {
        let (s, why) = status(&report, name);
        assert_eq!(s, CheckStatus::Pass, "{name}: {why}");
    }
    assert!(report.ok(), "{:?}", report.checks);
    assert!(status(&report, "h2").1.contains("ALPN agreed h2"));
}

#[test]
fn each_flaw_fails_its_check_and_leaves_the_others() {
    let cases = [
        (ProtocolFlaw::GrpcCanned, "grpc-compute", "body"),
        (
            ProtocolFlaw::GrpcNeverRefuses,
            "grpc-invalid",
            "grpc-status 3",
        ),
        (ProtocolFlaw::NoH2Alpn, "h2", "tls_alert"),
        (ProtocolFlaw::H2cIsHttp1, "h2c", "closed_early"),
    ];
    for (flaw, failing, reason) in cases {
        let report = verify_protocols(flaw);
        for name in CHECKS {
            let (s, why) = status(&report, name);
            if name == failing {
                assert_eq!(s, CheckStatus::Fail, "{flaw:?} should fail {name}: {why}");
                assert!(why.contains(reason), "{flaw:?}: `{why}` lacks `{reason}`");
            } else {
                assert_eq!(s, CheckStatus::Pass, "{flaw:?} should leave {name}: {why}");
            }
        }
    }
}

#[test]
fn without_the_listeners_the_checks_are_skipped_and_said_so() {
    let s = serve_protocols(ProtocolFlaw::None);
    let report = verify(&VerifyOptions::new(
        Client::new(s.plain.addr, Duration::from_secs(5)),
        1,
    ));
    for name in CHECKS {
        assert!(report.get(name).is_none(), "{name} ran");
    }
    for part in ["tls", "h2", "h2c", "grpc"] {
        assert!(
            report
                .skipped
                .iter()
                .any(|l| l.starts_with(&format!("{part}: not asked for"))),
            "{part}: {:?}",
            report.skipped
        );
    }
}
