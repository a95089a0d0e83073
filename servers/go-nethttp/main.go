// Command server is the netbench reference server for Go's net/http.
//
// It follows contract/CONTRACT.md: it listens on HOST:PORT (defaults
// 127.0.0.1 and 1234), serves /blank, /work and /echo/<text>, the optional
// parts db (/db and /db/list from PostgreSQL at DATABASE_URL, through a pgx
// pool of at most DATABASE_POOL_SIZE connections), ws (WebSocket echo at
// /ws), and those of contract 1.2: static (/static/14k and /static/1m from
// ./static), upload (POST /upload) and json-comp (/work gzip-compressed on
// request), and those of contract 1.3: fortunes (/fortunes, an html/template
// page of the fortune table), queries and updates (/queries and /updates of
// the world table), and contract 1.4's app (/app, a session's page, and
// /app/logout, with the stylesheet and script of ../../contract/app or
// APP_DIR); contract 1.5's tls and h2 (TLS_PORT), h2c (H2C_PORT) and grpc
// (GRPC_PORT); and exits on SIGTERM. An optional first argument "0" or "1" makes "/"
// answer as /blank or /work.
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

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	pool, err := openPool(ctx)
	if err != nil {
		return err
	}
	if pool != nil {
		defer pool.Close()
	}

	// The contract's static files, written by the build into ./static
	// (STATIC_DIR elsewhere); without them /static/ answers 404.
	staticDir := getenv("STATIC_DIR", "static")
	static, err := openStatic(staticDir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "server: no static files, /static/ answers 404: %v\n", err)
	}
	if static.root != nil {
		defer static.root.Close()
	}

	// The contract's stylesheet and script for /app, read once; without them
	// /app answers 503.
	app, err := loadApp(getenv("APP_DIR", "../../contract/app"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "server: no app files, /app answers 503: %v\n", err)
	}

	handler := newHandler(root, pool, static, app)
	host := getenv("HOST", "127.0.0.1")

	// Listening only once everything above is set up, PORT last: the runner
	// takes an accepting socket as ready.
	listeners, err := openProtocols(host, handler)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, getenv("PORT", "1234")))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler}
	listeners = append(listeners, listener{"http", ln, func() error { return srv.Serve(ln) }, srv.Shutdown})

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

	// Every listener stops together, with two seconds for the requests in flight.
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
