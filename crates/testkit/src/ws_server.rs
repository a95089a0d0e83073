//! The contract server's WebSocket echo at `/ws` (CONTRACT.md, "ws"),
//! written with the engine's codec: the `101`, then every message echoed
//! whole (a long one in two frames, which the contract allows and clients
//! must join), pings answered with pongs, a close answered with a close and
//! the end of the connection, an unmasked frame refused with close 1002.
//! With `fixed_payload` it cheats: every echo has the right type and length
//! but the same bytes, the server `verify` and the load engine must catch.

use std::io::{self, BufReader, Read, Write};
use std::net::TcpStream;

use netbench_engine::ws::frame::{self, Opcode, Sender};
use netbench_engine::ws::handshake::accept_for;

/// The contract's largest message; a longer one is refused (close 1009).
const MAX_MESSAGE: usize = 64 * 1024;
/// Echoes longer than this go out in two frames.
const SPLIT_OVER: usize = 4096;

/// Upgrades the connection whose request carried `key`, then echoes until
/// the client closes or breaks the protocol.
pub(crate) fn serve(
    mut r: BufReader<TcpStream>,
    mut w: TcpStream,
    key: &str,
    fixed_payload: bool,
) -> io::Result<()> {
    let accept = accept_for(key.trim().as_bytes());
    w.write_all(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ")?;
    w.write_all(&accept)?;
    w.write_all(b"\r\n\r\n")?;
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    // The message being received: its type and payload so far.
    let mut message: Option<(Opcode, Vec<u8>)> = None;
    let mut out = Vec::new();
    loop {
        let head = match frame::parse_head(&buf, Sender::Client) {
            Ok(Some(h)) if h.len > MAX_MESSAGE as u64 => return close(&mut w, 1009),
            Ok(Some(h)) if buf.len() as u64 >= h.head_len as u64 + h.len => h,
            Ok(_) => {
                let n = r.read(&mut chunk)?;
                if n == 0 {
                    return Ok(());
                }
                buf.extend_from_slice(&chunk[..n]);
                continue;
            }
            // Unmasked, reserved bits or opcodes, a fragmented control frame.
            Err(_) => return close(&mut w, 1002),
        };
        let end = head.head_len + head.len as usize;
        let mut payload = buf[head.head_len..end].to_vec();
        buf.drain(..end);
        frame::apply_mask(
            &mut payload,
            head.mask.expect("client frames are masked"),
            0,
        );
        out.clear();
        match head.opcode {
            Opcode::Ping => frame::write_frame(&mut out, true, Opcode::Pong, &payload, None),
            Opcode::Pong => {}
            Opcode::Close => {
                let code = payload.get(..2).unwrap_or(&[]);
                frame::write_frame(&mut out, true, Opcode::Close, code, None);
                w.write_all(&out)?;
                return Ok(());
            }
            Opcode::Continuation => match message.as_mut() {
                Some((_, data)) if data.len() + payload.len() <= MAX_MESSAGE => {
                    data.extend_from_slice(&payload)
                }
                Some(_) => return close(&mut w, 1009),
                None => return close(&mut w, 1002),
            },
            opcode => {
                if message.is_some() {
                    return close(&mut w, 1002);
                }
                message = Some((opcode, payload));
            }
        }
        if head.fin && !head.opcode.is_control() {
            let (opcode, mut data) = message.take().expect("a data frame came");
            if opcode == Opcode::Text && std::str::from_utf8(&data).is_err() {
                return close(&mut w, 1007);
            }
            if fixed_payload {
                data.fill(b'x');
            }
            if data.len() > SPLIT_OVER {
                let half = data.len() / 2;
                frame::write_frame(&mut out, false, opcode, &data[..half], None);
                frame::write_frame(&mut out, true, Opcode::Continuation, &data[half..], None);
            } else {
                frame::write_frame(&mut out, true, opcode, &data, None);
            }
        }
        if !out.is_empty() {
            w.write_all(&out)?;
        }
    }
}

/// Upgrades the connection whose request carried `key`, then writes pings
/// of the largest control payload (125 bytes) until the client goes away,
/// never reading what it sends back.
pub(crate) fn ping_flood(mut w: TcpStream, key: &str) -> io::Result<()> {
    let accept = accept_for(key.trim().as_bytes());
    w.write_all(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ")?;
    w.write_all(&accept)?;
    w.write_all(b"\r\n\r\n")?;
    let mut pings = Vec::new();
    for i in 0..64u8 {
        frame::write_frame(&mut pings, true, Opcode::Ping, &[i; 125], None);
    }
    loop {
        w.write_all(&pings)?;
    }
}

/// Sends a close with `code` and ends the connection.
fn close(w: &mut TcpStream, code: u16) -> io::Result<()> {
    let mut out = Vec::new();
    frame::write_frame(&mut out, true, Opcode::Close, &code.to_be_bytes(), None);
    w.write_all(&out)
}
