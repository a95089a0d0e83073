//! `netbench load https://` as a user runs it (issue 30): the TLS line and
//! the JSON's `tls` object, a failure's line that says what to do, and TLS
//! parts that `netbench merge` adds up, against test servers on 127.0.0.1:0.

mod common;

use common::{assert_load_schema, netbench, text};
use netbench_testkit::{serve, serve_tls, Behavior, TlsFlaw};
use serde_json::Value;

#[test]
fn https_reports_the_handshakes_apart_in_text_and_json() {
    let server = serve_tls(serve(Behavior::Good), TlsFlaw::None);
    let ca = server.ca_file.to_str().unwrap();
    let url = server.url("https", "/");
    let out = netbench(&[
        "load", "-c", "2", "-n", "200", "--quiet", "--cacert", ca, &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("tls          TLSv1_3 TLS13_"), "{stdout}");
    assert!(
        stdout.contains("ALPN http/1.1; 2 handshakes while measuring, 0 resumed (resumption off)"),
        "{stdout}"
    );

    let out = netbench(&[
        "load",
        "-c",
        "2",
        "-n",
        "100",
        "--requests-per-connection",
        "1",
        "--tls-resume",
        "--json",
        "--cacert",
        ca,
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_load_schema(&json);
    assert_eq!(json["requests"], 100);
    let tls = &json["tls"];
    assert_eq!(tls["version"], "TLSv1_3");
    assert_eq!(tls["alpn"], "http/1.1");
    assert!(tls["handshakes"].as_u64().unwrap() >= 100, "{tls}");
    assert!(tls["resumed"].as_u64().unwrap() >= 90, "{tls}");
    assert!(tls["handshake_us"]["p50"].as_f64().unwrap() > 0.0);
    assert_eq!(json["errors"]["tls_untrusted"], 0);
}

#[test]
fn a_certificate_nobody_trusts_fails_with_a_way_out() {
    let server = serve_tls(serve(Behavior::Good), TlsFlaw::None);
    // Trusting another CA: the server's certificate is not signed by it.
    let other = serve_tls(serve(Behavior::Good), TlsFlaw::None);
    let out = netbench(&[
        "load",
        "-c",
        "1",
        "-n",
        "3",
        "--quiet",
        "--cacert",
        other.ca_file.to_str().unwrap(),
        &server.url("https", "/"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("tls_untrusted 3 connections: no trusted authority signed"),
        "{stdout}"
    );
    assert!(stdout.contains("--cacert FILE, or --insecure"), "{stdout}");
    assert!(stdout.contains("no handshake finished"), "{stdout}");

    // --insecure takes it, and says so.
    let out = netbench(&[
        "load",
        "-c",
        "1",
        "-n",
        "3",
        "--quiet",
        "-k",
        &server.url("https", "/"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("certificate not checked (--insecure)"));
}

#[test]
fn tls_parts_merge_with_their_handshakes() {
    let server = serve_tls(serve(Behavior::Good), TlsFlaw::None);
    let dir = std::env::temp_dir().join(format!("netbench-tls-parts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for i in 0..2 {
        let file = dir.join(format!("part{i}.hlog"));
        let out = netbench(&[
            "load",
            "-c",
            "2",
            "-n",
            "50",
            "--quiet",
            "-k",
            "--histogram-out",
            file.to_str().unwrap(),
            &server.url("https", "/"),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        files.push(file.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let out = netbench(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(json["requests"], 100);
    assert_eq!(json["tls"]["handshakes"], 4, "{}", json["tls"]);
    assert_eq!(json["tls"]["version"], "TLSv1_3");
    let _ = std::fs::remove_dir_all(&dir);
}
