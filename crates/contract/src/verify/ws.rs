//! The `ws` checks (CONTRACT.md, "ws"): the upgrade, echoes of text and
//! binary messages byte for byte and in order, a fragmented message with a
//! ping between its fragments, ping and pong, the close handshake, and the
//! refusal of an unmasked client frame. Every payload is fresh from the seed,
//! so a server that answers from a cache or with a fixed payload fails.

use netbench_engine::ws::frame::Opcode;

use super::{fail, pass, Check, Ctx};
use crate::rng::SplitMix64;
use crate::ws_client::{Frame, WsClient, WsError};

/// The largest message the contract asks a server to echo.
const MAX_MESSAGE: usize = 64 * 1024;
/// Messages sent back to back before any echo is read, for the order.
const BURST: usize = 10;

/// Every ws check, each on its own connection. When the upgrade itself
/// fails the others are failed with that reason rather than run.
pub(super) fn checks(ctx: &mut Ctx<'_>) -> Vec<Check> {
    let path = ctx.path("/ws");
    let mut seeds = SplitMix64::new(ctx.opts.seed ^ 0x7773_6563_6b73);
    let mut connect = || WsClient::connect(ctx.client(), &path, seeds.next_u64());
    let first = match connect() {
        Ok(ws) => ws,
        Err(e) => {
            let why = format!("GET {path}: {e}");
            let mut out = vec![fail("ws-handshake", why.clone())];
            for name in [
                "ws-echo",
                "ws-fragmented",
                "ws-ping",
                "ws-close",
                "ws-unmasked",
            ] {
                out.push(fail(name, format!("not run: the upgrade failed ({why})")));
            }
            return out;
        }
    };
    drop(first);
    let handshake = pass(
        "ws-handshake",
        format!("GET {path} answered 101 with the right Sec-WebSocket-Accept and no extension"),
    );
    let mut run =
        |name: &'static str, check: fn(&mut WsClient) -> Result<String, String>| match connect() {
            Ok(mut ws) => match check(&mut ws) {
                Ok(why) => pass(name, why),
                Err(why) => fail(name, why),
            },
            Err(e) => fail(name, format!("GET {path}: {e}")),
        };
    vec![
        handshake,
        run("ws-echo", echo),
        run("ws-fragmented", fragmented),
        run("ws-ping", ping),
        run("ws-close", close),
        run("ws-unmasked", unmasked),
    ]
}

fn kind(opcode: Opcode) -> &'static str {
    match opcode {
        Opcode::Text => "text",
        Opcode::Binary => "binary",
        _ => "control",
    }
}

/// A fresh payload: random ASCII letters for text (valid UTF-8), random
/// bytes for binary.
fn payload(ws: &mut WsClient, len: usize, opcode: Opcode) -> Vec<u8> {
    const LETTERS: &[u8; 52] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut out = vec![0u8; len];
    ws.fill(&mut out);
    if opcode == Opcode::Text {
        for b in out.iter_mut() {
            *b = LETTERS[(usize::from(*b) * LETTERS.len()) >> 8];
        }
    }
    out
}

/// Why an echo is not the message sent, if it is not.
fn differs(sent: (Opcode, &[u8]), got: &(Opcode, Vec<u8>)) -> Option<String> {
    let (op, data) = sent;
    let what = format!("a {} B {} message", data.len(), kind(op));
    if got.0 != op {
        return Some(format!("{what} came back as a {} message", kind(got.0)));
    }
    if got.1.len() != data.len() {
        return Some(format!("{what} came back with {} B", got.1.len()));
    }
    let at = data.iter().zip(&got.1).position(|(a, b)| a != b)?;
    Some(format!(
        "{what} came back with other bytes (the first at offset {at})"
    ))
}

/// Sends one message and reads its echo.
fn round_trip(ws: &mut WsClient, opcode: Opcode, data: &[u8]) -> Result<(), String> {
    let what = format!("a {} B {} message", data.len(), kind(opcode));
    ws.send(true, opcode, data, true)
        .map_err(|e| format!("{what}: {e}"))?;
    let got = ws.message(|_| {}).map_err(|e| format!("{what}: {e}"))?;
    match differs((opcode, data), &got) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

fn echo(ws: &mut WsClient) -> Result<String, String> {
    let mut sizes = vec![0, 125, 126, MAX_MESSAGE];
    let mut r = [0u8; 8];
    for _ in 0..3 {
        ws.fill(&mut r);
        sizes.push(1 + (u64::from_le_bytes(r) % MAX_MESSAGE as u64) as usize);
    }
    let mut count = 0;
    for opcode in [Opcode::Text, Opcode::Binary] {
        for &len in &sizes {
            let data = payload(ws, len, opcode);
            round_trip(ws, opcode, &data)?;
            count += 1;
        }
    }
    // Back to back, then the echoes: they must come in the order sent.
    let burst: Vec<(Opcode, Vec<u8>)> = (0..BURST)
        .map(|i| {
            let opcode = if i % 2 == 0 {
                Opcode::Text
            } else {
                Opcode::Binary
            };
            ws.fill(&mut r);
            let len = 1 + usize::from(r[0]) % 200;
            (opcode, payload(ws, len, opcode))
        })
        .collect();
    for (opcode, data) in &burst {
        ws.send(true, *opcode, data, true)
            .map_err(|e| format!("{BURST} messages back to back: {e}"))?;
    }
    for (i, (opcode, data)) in burst.iter().enumerate() {
        let got = ws
            .message(|_| {})
            .map_err(|e| format!("{BURST} messages back to back, echo {}: {e}", i + 1))?;
        if let Some(why) = differs((*opcode, data), &got) {
            return Err(format!(
                "{BURST} messages back to back: echo {} is not message {}: {why}",
                i + 1,
                i + 1
            ));
        }
    }
    Ok(format!(
        "{count} text and binary messages of {sizes:?} B, and {BURST} back to back, echoed byte for byte in order"
    ))
}

fn fragmented(ws: &mut WsClient) -> Result<String, String> {
    let data = payload(ws, 300, Opcode::Text);
    let ping = payload(ws, 16, Opcode::Text);
    let send = |ws: &mut WsClient, fin, opcode, part: &[u8]| {
        ws.send(fin, opcode, part, true)
            .map_err(|e| format!("sending the fragments: {e}"))
    };
    send(ws, false, Opcode::Text, &data[..100])?;
    send(ws, true, Opcode::Ping, &ping)?;
    send(ws, false, Opcode::Continuation, &data[100..200])?;
    send(ws, true, Opcode::Continuation, &data[200..])?;
    let mut pongs: Vec<Vec<u8>> = Vec::new();
    let got = ws
        .message(|f: &Frame| {
            if f.opcode == Opcode::Pong {
                pongs.push(f.payload.clone());
            }
        })
        .map_err(|e| format!("a 300 B text message in three fragments: {e}"))?;
    match pongs.as_slice() {
        [] => return Err("the ping between the fragments got no pong before the message".into()),
        [p] if *p != ping => return Err("the pong did not carry the ping's payload".into()),
        [_] => {}
        more => return Err(format!("one ping got {} pongs", more.len())),
    }
    if let Some(why) = differs((Opcode::Text, &data), &got) {
        return Err(format!("sent in three fragments, {why}"));
    }
    Ok("a 300 B text message in three fragments with a ping between them: the pong, then the whole message".into())
}

fn ping(ws: &mut WsClient) -> Result<String, String> {
    let data = payload(ws, 16, Opcode::Binary);
    ws.send(true, Opcode::Ping, &data, true)
        .map_err(|e| format!("sending a ping: {e}"))?;
    let f = ws.frame().map_err(|e| format!("a ping: {e}"))?;
    if f.opcode != Opcode::Pong {
        return Err(format!(
            "a ping was answered with a {:?} frame, not a pong",
            f.opcode
        ));
    }
    if f.payload != data {
        return Err("the pong did not carry the ping's payload".into());
    }
    Ok("a ping with 16 B got a pong with the same payload".into())
}

fn close(ws: &mut WsClient) -> Result<String, String> {
    // 1000, normal closure, and a reason.
    let mut body = 1000u16.to_be_bytes().to_vec();
    body.extend_from_slice(b"verify done");
    ws.send(true, Opcode::Close, &body, true)
        .map_err(|e| format!("sending a close: {e}"))?;
    let f = loop {
        match ws.frame() {
            // Pongs or echoes still under way are not the answer.
            Ok(f) if f.opcode != Opcode::Close => continue,
            Ok(f) => break f,
            Err(e) => return Err(format!("a close (1000) got no close back: {e}")),
        }
    };
    match f.payload.get(..2) {
        Some([3, 232]) => {}
        Some(code) => {
            return Err(format!(
                "a close (1000) got a close with the status code {}",
                u16::from_be_bytes([code[0], code[1]])
            ))
        }
        None => return Err("a close (1000) got a close without a status code".into()),
    }
    match ws.closes(false, |_| {}) {
        Ok(true) => Ok("a close (1000) got a close (1000), then the connection ended".into()),
        Ok(false) => Err("after the close handshake the server kept the connection open".into()),
        Err(e) => Err(format!("after the close handshake: {e}")),
    }
}

fn unmasked(ws: &mut WsClient) -> Result<String, String> {
    let data = payload(ws, 20, Opcode::Text);
    ws.send(true, Opcode::Text, &data, false)
        .map_err(|e| format!("sending an unmasked frame: {e}"))?;
    let mut echoed = false;
    let closed = ws.closes(true, |f| echoed |= !f.opcode.is_control());
    if echoed {
        return Err(
            "an unmasked client frame was echoed (RFC 6455 section 5.1: a protocol error)".into(),
        );
    }
    match closed {
        Ok(true) => {
            Ok("an unmasked client frame was not echoed and the connection was closed".into())
        }
        Ok(false) => {
            Err("after an unmasked client frame the server kept the connection open".into())
        }
        // A server may break the connection off hard; all that matters is
        // that nothing was echoed and the connection is gone.
        Err(WsError::Read(_)) => {
            Ok("an unmasked client frame was not echoed and the connection was broken off".into())
        }
        Err(e) => Err(format!("after an unmasked frame: {e}")),
    }
}
