// Command server is the netbench reference server for github.com/gin-gonic/gin.
//
// It follows contract/CONTRACT.md: it listens on HOST:PORT (defaults
// 127.0.0.1 and 1234), serves /blank, /work and /echo/<text>, and exits on
// SIGTERM. An optional first argument "0" or "1" makes "/" answer as /blank
// or /work. The gin engine is served by a net/http Server with default settings.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run() error {
	root := rootNone
	if len(os.Args) > 2 {
		return errors.New("too many arguments (expected at most one: 0 or 1)")
	}
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "0":
			root = rootBlank
		case "1":
			root = rootWork
		default:
			return fmt.Errorf("unknown argument %q (expected 0 or 1)", os.Args[1])
		}
	}

	// JoinHostPort brackets an IPv6 address ("::1" becomes "[::1]:1234").
	addr := net.JoinHostPort(getenv("HOST", "127.0.0.1"), getenv("PORT", "1234"))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "go-gin listening on", ln.Addr())

	srv := &http.Server{Handler: newHandler(root)}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}

	// Stop accepting, close idle keep-alive connections and let requests in
	// flight finish, for at most two seconds.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

func getenv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
