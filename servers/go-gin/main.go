// Command server is the netbench reference server for github.com/gin-gonic/gin.
//
// It follows contract/CONTRACT.md: it listens on HOST:PORT (defaults
// 127.0.0.1 and 1234), serves /blank, /work and /echo/<text>, over TLS
// and HTTP/2 on TLS_PORT and over h2c on H2C_PORT too when they are set
// (contract 1.5's tls, h2 and h2c), and exits on SIGTERM. An optional first
// argument "0" or "1" makes "/" answer as /blank or /work. The gin engine is
// served by net/http Servers with default settings.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
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

	engine := newHandler(root)
	host := getenv("HOST", "127.0.0.1")

	// PORT last: the runner takes an accepting socket as ready.
	listeners, err := openProtocols(host, engine)
	if err != nil {
		return err
	}
	// JoinHostPort brackets an IPv6 address ("::1" becomes "[::1]:1234").
	ln, err := net.Listen("tcp", net.JoinHostPort(host, getenv("PORT", "1234")))
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "go-gin listening on", ln.Addr())
	srv := &http.Server{Handler: engine}
	listeners = append(listeners, listener{"http", ln, func() error { return srv.Serve(ln) }, srv.Shutdown})

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		go func() {
			if err := l.serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s: %w", l.name, err)
			}
		}()
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}

	// Stop accepting, close idle keep-alive connections and let requests in
	// flight finish, for at most two seconds, on every listener together.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, l := range listeners {
		wg.Go(func() { l.shutdown(shutdownCtx) })
	}
	wg.Wait()
	return nil
}

func getenv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
