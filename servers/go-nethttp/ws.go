package main

import (
	"net/http"

	"github.com/coder/websocket"
)

// wsMaxMessage is the contract's largest message. coder/websocket's default
// read limit is 32 KiB, which would close the connection on a 64 KiB echo.
const wsMaxMessage = 64 << 10

// wsEcho upgrades GET /ws and echoes every message. coder/websocket answers
// pings with pongs and a close with a close (same code) while a read is in
// progress, and fails the read on an unmasked client frame, so the loop only
// has to read and write messages.
func wsEcho(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// netbench offers no extension; disabled also means an offered
		// permessage-deflate is declined.
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		// Accept has already answered the failed handshake.
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(wsMaxMessage)

	ctx := r.Context()
	for {
		// Read returns a whole message even when the client sent it in
		// fragments, so the echo goes out once the message is complete
		// (the contract's order: a ping between fragments gets its pong
		// first, then the echo).
		typ, msg, err := c.Read(ctx)
		if err != nil {
			// A close from the client has already been answered with a
			// close by the library; any other error (an unmasked frame,
			// a message over the limit, a dropped connection) ends the
			// connection through CloseNow.
			return
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
	}
}
