//! The contract's parts of version 1.2 end to end (issue 31): `verify`'s
//! static, upload and json-comp checks against the contract server, right
//! and with one flaw each. Every flaw must fail the check that names it,
//! and leave the checks it has nothing to do with passing. Counts and
//! reasons only, never speed.

use std::time::Duration;

use netbench_contract::{verify, CheckStatus, Client, VerifyOptions, VerifyReport};
use netbench_testkit::{serve_contract, Flaw};

const STATIC: [&str; 4] = [
    "static-content",
    "static-length",
    "static-headers",
    "static-304",
];
const UPLOAD: [&str; 3] = ["upload-digest", "upload-early", "upload-too-large"];
const JSON_COMP: [&str; 3] = ["json-comp-gzip", "json-comp-plain", "json-comp-br"];

/// `verify` with every part of 1.2 asked for, and `timeout` per exchange.
fn verify_apps(flaw: Flaw, timeout: Duration) -> VerifyReport {
    let server = serve_contract(flaw);
    let mut opts = VerifyOptions::new(Client::new(server.addr, timeout), 0x5eed);
    opts.documents = 5;
    opts.static_files = true;
    opts.upload = true;
    opts.json_comp = true;
    verify(&opts)
}

fn status(report: &VerifyReport, name: &str) -> (CheckStatus, String) {
    let c = report
        .get(name)
        .unwrap_or_else(|| panic!("{name} was not run: {:?}", report.checks));
    (c.status, c.reason.clone())
}

fn fails(report: &VerifyReport, name: &str, reason_part: &str) {
    let (s, why) = status(report, name);
    assert_eq!(s, CheckStatus::Fail, "{name} should fail: {why}");
    assert!(
        why.contains(reason_part),
        "{name}: `{why}` lacks `{reason_part}`"
    );
}

fn passes(report: &VerifyReport, names: &[&str]) {
    for name in names {
        let (s, why) = status(report, name);
        assert_eq!(s, CheckStatus::Pass, "{name}: {why}");
    }
}

#[test]
fn a_correct_server_passes_every_check_of_the_three_parts() {
    let report = verify_apps(Flaw::None, Duration::from_secs(5));
    passes(&report, &STATIC);
    passes(&report, &UPLOAD);
    passes(&report, &JSON_COMP);
    assert!(report.ok(), "{:?}", report.checks);
    assert!(report.skipped.iter().all(|s| !s.starts_with("static")
        && !s.starts_with("upload")
        && !s.starts_with("json-comp")));
    // The reference server prefers brotli, so the br path was decoded.
    assert!(status(&report, "json-comp-br").1.contains("br: br"));
}

#[test]
fn without_asking_the_parts_are_skipped_and_said_so() {
    let server = serve_contract(Flaw::None);
    let report = verify(&VerifyOptions::new(
        Client::new(server.addr, Duration::from_secs(5)),
        1,
    ));
    for prefix in ["static", "upload", "json-comp"] {
        assert!(
            report.checks.iter().all(|c| !c.name.starts_with(prefix)),
            "{prefix}"
        );
        assert!(
            report
                .skipped
                .iter()
                .any(|s| s.starts_with(&format!("{prefix}: not asked for (--{prefix}"))),
            "{:?}",
            report.skipped
        );
    }
}

#[test]
fn a_truncated_file_fails_static_content() {
    let report = verify_apps(Flaw::StaticTruncated, Duration::from_secs(5));
    fails(
        &report,
        "static-content",
        "stops after 13336 of its 14336 bytes",
    );
    // It says its length truly and has its validators.
    passes(&report, &["static-length", "static-headers", "static-304"]);
}

#[test]
fn an_ignored_if_none_match_fails_static_304() {
    let report = verify_apps(Flaw::StaticNo304, Duration::from_secs(5));
    fails(&report, "static-304", "answered 200, want 304");
    passes(
        &report,
        &["static-content", "static-length", "static-headers"],
    );
}

#[test]
fn a_content_length_short_of_the_body_fails_static_length() {
    let report = verify_apps(Flaw::StaticWrongLength, Duration::from_secs(5));
    fails(
        &report,
        "static-length",
        "other bytes than its Content-Length said",
    );
    // What the client read by the length is the file cut short.
    fails(&report, "static-content", "the body stops after");
    passes(&report, &["static-headers"]);
}

#[test]
fn a_wrong_digest_fails_upload_digest() {
    let report = verify_apps(Flaw::UploadWrongDigest, Duration::from_secs(5));
    fails(&report, "upload-digest", "sha256 is");
    passes(&report, &["upload-early", "upload-too-large"]);
    passes(&report, &JSON_COMP);
}

#[test]
fn an_answer_before_the_body_fails_upload_early() {
    let report = verify_apps(Flaw::UploadEarly, Duration::from_secs(5));
    fails(
        &report,
        "upload-early",
        "answered before the body was all sent",
    );
    // Answered from the head, it cannot know the digest either.
    fails(&report, "upload-digest", "sha256 is");
    passes(&report, &["upload-too-large"]);
}

#[test]
fn reading_a_10_gb_body_fails_upload_too_large_within_the_timeout() {
    let report = verify_apps(Flaw::UploadNoLimit, Duration::from_secs(2));
    fails(&report, "upload-too-large", "got no answer within 2s");
    // Its own client gave up, not verify's: the checks after it still ran.
    passes(&report, &["upload-digest", "upload-early"]);
    passes(&report, &JSON_COMP);
    passes(&report, &["framing", "keep-alive"]);
}

#[test]
fn a_coding_claimed_on_a_plain_body_fails_json_comp_gzip_and_br() {
    let report = verify_apps(Flaw::GzipClaimPlain, Duration::from_secs(5));
    fails(&report, "json-comp-gzip", "not valid gzip data");
    fails(&report, "json-comp-br", "not valid br data");
    passes(&report, &["json-comp-plain", "work"]);
}

#[test]
fn gzip_the_request_does_not_allow_fails_json_comp_plain_and_br() {
    let report = verify_apps(Flaw::GzipUnasked, Duration::from_secs(5));
    fails(
        &report,
        "json-comp-plain",
        "Accept-Encoding: identity was answered with Content-Encoding gzip",
    );
    fails(
        &report,
        "json-comp-br",
        "Accept-Encoding: br was answered with Content-Encoding gzip",
    );
    // A request without Accept-Encoding still gets plain JSON.
    passes(&report, &["json-comp-gzip", "work", "keep-alive"]);
}

#[test]
fn a_decompression_bomb_fails_json_comp_gzip_at_the_decode_limit() {
    let report = verify_apps(Flaw::GzipBomb, Duration::from_secs(5));
    fails(&report, "json-comp-gzip", "decompression bomb");
    passes(&report, &["json-comp-plain", "json-comp-br"]);
}
