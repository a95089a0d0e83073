// The listeners of contract 1.5 beside PORT: TLS (tls, h2) and h2c, each opened only when its port is set.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"
)

// listener is one open socket with how to serve it and how to stop it.
type listener struct {
	name     string
	ln       net.Listener
	serve    func() error
	shutdown func(context.Context) error
}

// openProtocols opens the TLS and h2c listeners whose ports (TLS_PORT,
// H2C_PORT) are set, serving engine on both. They are opened before PORT,
// so a server that accepts on PORT (ready, to the runner) accepts on all.
func openProtocols(host string, engine *gin.Engine) ([]listener, error) {
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
		// What engine.RunTLS does (http.Server's ListenAndServeTLS), on a
		// listener opened here: ServeTLS adds ALPN "h2" and "http/1.1" and
		// serves HTTP/2 with net/http's bundled server at its defaults. The
		// certificate is loaded once up front so that a bad file stops the
		// start rather than the first handshake.
		srv := &http.Server{Handler: engine, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
		ls = append(ls, listener{"tls", ln, func() error { return srv.ServeTLS(ln, "", "") }, srv.Shutdown})
	}

	if port := os.Getenv("H2C_PORT"); port != "" {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			return fail(err)
		}
		// gin's own switch for h2c: with UseH2C, engine.Handler() wraps the
		// engine in x/net's h2c handler and an http2.Server of default
		// settings (prior knowledge and Upgrade: h2c; HTTP/1.1 passes
		// through). PORT keeps serving the engine itself, unwrapped.
		engine.UseH2C = true
		srv := &http.Server{Handler: engine.Handler()}
		ls = append(ls, listener{"h2c", ln, func() error { return srv.Serve(ln) }, srv.Shutdown})
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
