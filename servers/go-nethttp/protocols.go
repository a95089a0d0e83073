// The listeners of contract 1.5 beside PORT: TLS (tls, h2), h2c and gRPC, each opened only when its port is set.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
)

// listener is one open socket with how to serve it and how to stop it.
type listener struct {
	name     string
	ln       net.Listener
	serve    func() error
	shutdown func(context.Context) error
}

// openProtocols opens the TLS, h2c and gRPC listeners whose ports
// (TLS_PORT, H2C_PORT, GRPC_PORT) are set, serving h on the first two.
// They are opened before PORT, so a server that accepts on PORT (ready, to
// the runner) accepts on all of them.
func openProtocols(host string, h http.Handler) ([]listener, error) {
	var ls []listener
	fail := func(err error) ([]listener, error) {
		for _, l := range ls {
			l.ln.Close()
		}
		return nil, err
	}

	if port := os.Getenv("TLS_PORT"); port != "" {
		cert, err := loadCert()
		if err != nil {
			return fail(err)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			return fail(err)
		}
		// ServeTLS adds ALPN "h2" and "http/1.1" to this config and serves
		// HTTP/2 with net/http's own bundled implementation: the defaults
		// of ListenAndServeTLS, with the certificate loaded once up front so
		// that a bad file stops the start rather than the first handshake.
		srv := &http.Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
		ls = append(ls, listener{"tls", ln, func() error { return srv.ServeTLS(ln, "", "") }, srv.Shutdown})
	}

	if port := os.Getenv("H2C_PORT"); port != "" {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			return fail(err)
		}
		// net/http's own unencrypted HTTP/2 (Go 1.24's Protocols): the
		// bundled HTTP/2 server that also serves h2 over TLS, its settings
		// left at their defaults. x/net's h2c package, the older way, now
		// says it is deprecated and unmaintained. HTTP/1.1 is kept on too
		// (the contract allows it); Upgrade: h2c is not served.
		srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
		ls = append(ls, listener{"h2c", ln, func() error { return srv.Serve(ln) }, srv.Shutdown})
	}

	if port := os.Getenv("GRPC_PORT"); port != "" {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			return fail(err)
		}
		s := newGRPCServer()
		ls = append(ls, listener{"grpc", ln, func() error { return s.Serve(ln) }, func(ctx context.Context) error {
			done := make(chan struct{})
			go func() {
				s.GracefulStop()
				close(done)
			}()
			select {
			case <-done:
			case <-ctx.Done():
				s.Stop()
			}
			return nil
		}})
	}
	return ls, nil
}

// loadCert reads the runner's TLS_CERT (chain) and TLS_KEY (PKCS#8), PEM.
func loadCert() (tls.Certificate, error) {
	certFile, keyFile := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")
	if certFile == "" || keyFile == "" {
		return tls.Certificate{}, errors.New("TLS_PORT is set but TLS_CERT or TLS_KEY is not")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS_CERT/TLS_KEY: %w", err)
	}
	return cert, nil
}
