package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

type wsMessage struct {
	typ  websocket.MessageType
	data []byte
	err  error
}

// TestWSEcho talks to /ws with coder/websocket's own client: messages of
// both types and of the contract's sizes come back whole, in order, and a
// ping is answered.
func TestWSEcho(t *testing.T) {
	srv := newServer(t, rootNone)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", &websocket.DialOptions{
		CompressionMode: websocket.CompressionContextTakeover, // offered, must be declined
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		t.Errorf("server negotiated an extension: %q", ext)
	}
	// Above the contract's 64 KiB the client would otherwise refuse echoes.
	c.SetReadLimit(1 << 20)

	// Ping needs a concurrent reader to see its pong.
	msgs := make(chan wsMessage, 1)
	go func() {
		for {
			typ, data, err := c.Read(ctx)
			msgs <- wsMessage{typ, data, err}
			if err != nil {
				return
			}
		}
	}()

	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}

	random := func(n int) []byte {
		b := make([]byte, n)
		rand.Read(b)
		return b
	}
	sent := []wsMessage{
		{typ: websocket.MessageText, data: []byte("hello")},
		{typ: websocket.MessageText, data: []byte{}},
		{typ: websocket.MessageBinary, data: []byte{}},
		{typ: websocket.MessageBinary, data: random(125)},
		{typ: websocket.MessageBinary, data: random(126)},
		{typ: websocket.MessageText, data: bytes.Repeat([]byte("é"), 64<<10/2)},
		{typ: websocket.MessageBinary, data: random(64 << 10)},
		{typ: websocket.MessageText, data: []byte("after the big ones")},
	}
	for i, m := range sent {
		if err := c.Write(ctx, m.typ, m.data); err != nil {
			t.Fatalf("message %d: write: %v", i, err)
		}
		got := <-msgs
		if got.err != nil {
			t.Fatalf("message %d (%v, %d B): read: %v", i, m.typ, len(m.data), got.err)
		}
		if got.typ != m.typ || !bytes.Equal(got.data, m.data) {
			t.Fatalf("message %d: sent %v of %d B, got %v of %d B", i, m.typ, len(m.data), got.typ, len(got.data))
		}
		if i == 3 {
			if err := c.Ping(ctx); err != nil {
				t.Fatalf("ping between messages: %v", err)
			}
		}
	}

	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// The tests below write frames by hand, for what a conforming client
// library never does: fragments with a ping between them, a chosen close
// code, an unmasked frame.

func wsHandshake(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	key := base64.StdEncoding.EncodeToString([]byte("netbench-ws-key!"))
	io.WriteString(conn, "GET /ws HTTP/1.1\r\nHost: "+addr+"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: "+key+"\r\nSec-WebSocket-Version: 13\r\n"+
		"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != 101 ||
		!strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") ||
		!strings.EqualFold(resp.Header.Get("Connection"), "Upgrade") ||
		resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) ||
		resp.Header.Get("Sec-WebSocket-Extensions") != "" {
		t.Fatalf("handshake: %d %v", resp.StatusCode, resp.Header)
	}
	return conn, br
}

const (
	opCont   = 0x0
	opText   = 0x1
	opBinary = 0x2
	opClose  = 0x8
	opPing   = 0x9
	opPong   = 0xA
)

// writeFrame writes one client frame (payloads under 126 bytes suffice here).
func writeFrame(t *testing.T, conn net.Conn, fin bool, op byte, payload []byte, masked bool) {
	t.Helper()
	b0 := op
	if fin {
		b0 |= 0x80
	}
	frame := []byte{b0, byte(len(payload))}
	data := append([]byte(nil), payload...)
	if masked {
		frame[1] |= 0x80
		mask := []byte{0x12, 0x34, 0x56, 0x78}
		frame = append(frame, mask...)
		for i := range data {
			data[i] ^= mask[i%4]
		}
	}
	if _, err := conn.Write(append(frame, data...)); err != nil {
		t.Fatal(err)
	}
}

// readFrame reads one server frame, which must not be masked.
func readFrame(br *bufio.Reader) (fin bool, op byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(br, h[:]); err != nil {
		return
	}
	if h[1]&0x80 != 0 {
		return false, 0, nil, errors.New("server frame is masked")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(br, b[:]); err != nil {
			return
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(br, b[:]); err != nil {
			return
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(br, payload)
	return h[0]&0x80 != 0, h[0] & 0x0f, payload, err
}

// readMessage reads frames until a whole data message, answering nothing;
// control frames are returned as they come.
func readMessage(t *testing.T, br *bufio.Reader) (byte, []byte) {
	t.Helper()
	var op byte
	var msg []byte
	for {
		fin, fop, payload, err := readFrame(br)
		if err != nil {
			t.Fatalf("reading a frame: %v", err)
		}
		if fop >= opClose {
			return fop, payload
		}
		if fop != opCont {
			op = fop
		}
		msg = append(msg, payload...)
		if fin {
			return op, msg
		}
	}
}

func TestWSFragmentedAndClose(t *testing.T) {
	srv := newServer(t, rootNone)
	conn, br := wsHandshake(t, srv.Listener.Addr().String())

	writeFrame(t, conn, false, opText, []byte("frag-one "), true)
	writeFrame(t, conn, false, opCont, []byte("frag-two "), true)
	writeFrame(t, conn, true, opPing, []byte("between"), true)
	writeFrame(t, conn, true, opCont, []byte("frag-three"), true)

	if op, p := readMessage(t, br); op != opPong || string(p) != "between" {
		t.Fatalf("want the pong first, got op %#x %q", op, p)
	}
	if op, p := readMessage(t, br); op != opText || string(p) != "frag-one frag-two frag-three" {
		t.Fatalf("want the whole message, got op %#x %q", op, p)
	}

	writeFrame(t, conn, true, opClose, []byte{0x0f, 0xa1, 'b', 'y', 'e'}, true) // 4001
	op, p := readMessage(t, br)
	if op != opClose || len(p) < 2 || binary.BigEndian.Uint16(p) != 4001 {
		t.Fatalf("want a close with code 4001, got op %#x %v", op, p)
	}
	if _, _, _, err := readFrame(br); err != io.EOF {
		t.Fatalf("want the connection closed after the close, got %v", err)
	}
}

func TestWSUnmaskedFrame(t *testing.T) {
	srv := newServer(t, rootNone)
	conn, br := wsHandshake(t, srv.Listener.Addr().String())

	writeFrame(t, conn, true, opText, []byte("not masked"), false)
	for {
		_, op, p, err := readFrame(br)
		if err != nil {
			return // closed without (or after) a close frame: right
		}
		switch op {
		case opClose:
			if len(p) >= 2 && binary.BigEndian.Uint16(p) != 1002 {
				t.Fatalf("close code %d, want 1002", binary.BigEndian.Uint16(p))
			}
		case opText, opBinary, opCont:
			t.Fatalf("an unmasked frame was echoed: %q", p)
		}
	}
}

func TestWSWithoutUpgrade(t *testing.T) {
	a := do(t, newServer(t, rootNone), "GET", "/ws", nil)
	if a.status != 400 && a.status != 404 && a.status != 426 {
		t.Fatalf("GET /ws without an upgrade: got %d, want 400, 404 or 426", a.status)
	}
}
