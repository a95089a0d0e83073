// Tests of the TLS (tls, h2) and h2c listeners, with a certificate made here.
package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// testCert writes a self-signed certificate for 127.0.0.1 and localhost
// and its PKCS#8 key, PEM as the runner gives them, into a temporary
// folder, sets TLS_CERT and TLS_KEY, and returns a pool that trusts it.
func testCert(t *testing.T) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TLS_CERT", certFile)
	t.Setenv("TLS_KEY", keyFile)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// serveProtocols opens the listeners whose ports the test set (to "0": any
// free port), serves them as main does, and returns their addresses by name.
func serveProtocols(t *testing.T) map[string]string {
	t.Helper()
	ls, err := openProtocols("127.0.0.1", newHandler(rootNone))
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[string]string{}
	for _, l := range ls {
		addrs[l.name] = l.ln.Addr().String()
		go l.serve()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			l.shutdown(ctx)
		})
	}
	return addrs
}

func TestProtocolsOff(t *testing.T) {
	for _, k := range []string{"TLS_PORT", "H2C_PORT"} {
		t.Setenv(k, "")
	}
	if addrs := serveProtocols(t); len(addrs) != 0 {
		t.Fatalf("listeners opened without their ports: %v", addrs)
	}
}

func TestTLSNeedsCert(t *testing.T) {
	t.Setenv("TLS_PORT", "0")
	t.Setenv("TLS_CERT", "")
	t.Setenv("TLS_KEY", "")
	if _, err := openProtocols("127.0.0.1", newHandler(rootNone)); err == nil {
		t.Fatal("TLS_PORT without TLS_CERT and TLS_KEY was accepted")
	}
}

func TestTLSHTTP1(t *testing.T) {
	pool := testCert(t)
	t.Setenv("TLS_PORT", "0")
	addr := serveProtocols(t)["tls"]

	// ALPN http/1.1, through net/http's client.
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/blank")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "OK" || resp.Proto != "HTTP/1.1" {
		t.Fatalf("got %s %d %q", resp.Proto, resp.StatusCode, body)
	}
	if v := resp.TLS.Version; v != tls.VersionTLS13 {
		t.Errorf("TLS version %x, want 1.3", v)
	}
	if p := resp.TLS.NegotiatedProtocol; p != "http/1.1" {
		t.Errorf("ALPN %q, want http/1.1", p)
	}

	// Without ALPN: a bare handshake and a request written by hand, twice
	// on the same connection.
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for i := range 2 {
		fmt.Fprintf(conn, "GET /echo/bare-%d HTTP/1.1\r\nHost: localhost\r\n\r\n", i)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("bare-%d", i); resp.StatusCode != 200 || string(body) != want {
			t.Fatalf("without ALPN: got %d %q, want %q", resp.StatusCode, body, want)
		}
	}
}

// concurrentRequests sends n requests at once through client, mixing the
// contract's endpoints, and checks every answer and that all of them came
// over HTTP/2 on a single connection (so as concurrent streams).
func concurrentRequests(t *testing.T, client *http.Client, base string, n int) {
	t.Helper()
	var conns atomic.Int32
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if !i.Reused {
			conns.Add(1)
		}
	}}
	// A first request opens the connection, so the rest share it.
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", base+"/blank", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			var req *http.Request
			var want string
			switch i % 3 {
			case 0:
				req, _ = http.NewRequest("GET", base+"/blank", nil)
				want = "OK"
			case 1:
				req, _ = http.NewRequest("GET", fmt.Sprintf("%s/echo/stream-%d", base, i), nil)
				want = fmt.Sprintf("stream-%d", i)
			case 2:
				req, _ = http.NewRequest("POST", base+"/work", strings.NewReader(exampleDoc))
				want = `"minDate":"2019-03-01T00:00:00.000Z"`
			}
			req = req.WithContext(httptrace.WithClientTrace(context.Background(), trace))
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				errs <- err
				return
			}
			if resp.Proto != "HTTP/2.0" || resp.StatusCode != 200 || !strings.Contains(string(body), want) ||
				resp.Header.Get("Date") == "" {
				errs <- fmt.Errorf("%s %s: got %s %d %q", req.Method, req.URL.Path, resp.Proto, resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c := conns.Load(); c != 1 {
		t.Errorf("%d connections, want 1", c)
	}
}

func TestH2(t *testing.T) {
	pool := testCert(t)
	t.Setenv("TLS_PORT", "0")
	addr := serveProtocols(t)["tls"]
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	concurrentRequests(t, &http.Client{Transport: tr}, "https://"+addr, 30)

	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN %q, want h2", p)
	}
	checkSettings(t, conn)
}

func TestH2C(t *testing.T) {
	t.Setenv("H2C_PORT", "0")
	addr := serveProtocols(t)["h2c"]
	// The h2c listener keeps HTTP/1.1.
	resp, err := http.Get("http://" + addr + "/echo/h1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Proto != "HTTP/1.1" || string(body) != "h1" {
		t.Errorf("HTTP/1.1 on the h2c port: got %s %d %q", resp.Proto, resp.StatusCode, body)
	}

	// Prior knowledge: net/http's client then sends the preface, no Upgrade.
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	concurrentRequests(t, &http.Client{Transport: tr}, "http://"+addr, 30)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	checkSettings(t, conn)
}

// checkSettings opens HTTP/2 on conn and reads the server's first SETTINGS:
// the contract wants 100 concurrent streams or more.
func checkSettings(t *testing.T, conn net.Conn) {
	t.Helper()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok {
		t.Fatalf("first frame %v, want SETTINGS", f)
	}
	if v, ok := sf.Value(http2.SettingMaxConcurrentStreams); !ok || v < 100 {
		t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS %d (sent: %v), want 100 or more", v, ok)
	}
}
