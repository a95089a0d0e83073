//! `netbench load --ws` and `netbench verify --ws` as a user runs them,
//! against the contract server's WebSocket echo on 127.0.0.1:0.

mod common;

use common::{assert_load_schema, netbench, text};
use netbench_testkit::{serve, serve_contract, Behavior, Flaw};
use serde_json::Value;

#[test]
fn load_ws_counts_messages() {
    let server = serve_contract(Flaw::None);
    let url = format!("ws://{}/ws", server.addr);
    let out = netbench(&[
        "load",
        "--ws",
        "-c",
        "2",
        "-n",
        "300",
        "--ws-message-size",
        "200",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(&format!("WebSocket {url} (closed loop, 300 messages)")),
        "{stdout}"
    );
    assert!(stdout.contains("200 B text messages"), "{stdout}");
    assert!(
        stdout.contains("messages     300 good, 0 errors"),
        "{stdout}"
    );
    assert!(stdout.contains(" messages/s"), "{stdout}");
    assert!(stdout.contains("µs per message"), "{stdout}");
    assert!(!stdout.contains("requests"), "{stdout}");
}

#[test]
fn load_ws_json_matches_the_schema() {
    let server = serve_contract(Flaw::None);
    let url = format!("http://{}/ws", server.addr);
    let out = netbench(&[
        "load",
        "--ws",
        "--ws-binary",
        "-c",
        "2",
        "-n",
        "100",
        "-R",
        "1000",
        "--json",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_load_schema(&json);
    assert_eq!(json["unit"], "messages");
    assert_eq!(json["requests"], 100);
    assert_eq!(json["settings"]["ws"]["message_size"], 64);
    assert_eq!(json["settings"]["ws"]["binary"], true);
    assert_eq!(json["errors"]["ws_echo_mismatch"], 0);
}

#[test]
fn load_ws_against_a_server_without_it_names_the_handshake() {
    let server = serve(Behavior::Status(404));
    let url = format!("ws://{}/ws", server.addr);
    let out = netbench(&["load", "--ws", "-c", "1", "-n", "5", &url]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("handshake    5 connections failed the WebSocket upgrade"),
        "{stdout}"
    );
    assert!(stdout.contains("ws_handshake 5"), "{stdout}");
}

#[test]
fn load_ws_refuses_http_options() {
    let out = netbench(&["load", "--ws", "--body", "x", "ws://127.0.0.1:1/ws"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot be used with"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn verify_ws_passes_an_echo_and_fails_a_fixed_payload() {
    let good = serve_contract(Flaw::None);
    let out = netbench(&["verify", "--ws", &good.url("/")]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for check in [
        "ws-handshake",
        "ws-echo",
        "ws-fragmented",
        "ws-ping",
        "ws-close",
        "ws-unmasked",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains("PASS") && l.contains(check)),
            "{check}: {stdout}"
        );
    }

    let out = netbench(&["verify", &good.url("/")]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("skipped: ws: not asked for"), "{stdout}");

    let cheat = serve_contract(Flaw::WsFixedPayload);
    let out = netbench(&["verify", "--ws", &cheat.url("/")]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("ws-echo")),
        "{stdout}"
    );
}
