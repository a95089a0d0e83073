package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// staticBytes is the contract's formula for a static file of size bytes
// (CONTRACT.md, "static"), as contract/static/make.py writes it.
func staticBytes(size int) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	out := make([]byte, size)
	s := uint64(size) % (1 << 31)
	for i := range out {
		s = (1103515245*s + 12345) % (1 << 31)
		if i%64 == 63 {
			out[i] = '\n'
		} else {
			out[i] = alphabet[(s>>16)%64]
		}
	}
	return out
}

// The contract's files and their SHA-256 (CONTRACT.md, "static").
var contractFiles = []struct {
	name   string
	size   int
	digest string
}{
	{"14k", 14 << 10, "57a8ca1d858dbeaeac461a9c9cf2bb09a737493e9846b161c4ad840e42d613be"},
	{"1m", 1 << 20, "3f055e97e631e61d7f5b9e428abbbcfb07255bc181245e235f5fa8d676d99f3c"},
}

// newAppsServer serves a temporary folder holding the contract's files at
// /static/ (and beside it, outside the folder, a file that must stay
// unreachable).
func newAppsServer(t *testing.T) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	static := filepath.Join(dir, "static")
	if err := os.Mkdir(static, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range contractFiles {
		data := staticBytes(f.size)
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != f.digest {
			t.Fatalf("the test's formula makes %s wrong: %x", f.name, got)
		}
		if err := os.WriteFile(filepath.Join(static, f.name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := openStatic(static)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.root.Close() })
	srv := httptest.NewServer(newHandler(rootNone, nil, files, nil))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, path string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func TestStatic(t *testing.T) {
	srv := newAppsServer(t)
	for _, f := range contractFiles {
		path := "/static/" + f.name
		a := get(t, srv, path, nil)
		if a.status != 200 || a.body != string(staticBytes(f.size)) {
			t.Fatalf("%s: got %d and %d bytes", path, a.status, len(a.body))
		}
		if cl := a.header.Get("Content-Length"); cl != strconv.Itoa(f.size) {
			t.Errorf("%s: Content-Length %q, want %d", path, cl, f.size)
		}
		etag := a.header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 3 {
			t.Errorf("%s: ETag %q is not an entity-tag", path, etag)
		}
		lm, err := http.ParseTime(a.header.Get("Last-Modified"))
		date, _ := http.ParseTime(a.header.Get("Date"))
		if err != nil || lm.After(date) {
			t.Errorf("%s: Last-Modified %q, Date %q", path, a.header.Get("Last-Modified"), a.header.Get("Date"))
		}
		if again := get(t, srv, path, nil); again.header.Get("ETag") != etag {
			t.Errorf("%s: ETag changed from %q to %q", path, etag, again.header.Get("ETag"))
		}

		// If-None-Match naming the tag (strong, weak, in a list) is 304
		// without a body; another tag gets the file.
		for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag} {
			a := get(t, srv, path, map[string]string{"If-None-Match": inm})
			if a.status != 304 || a.body != "" {
				t.Errorf("%s, If-None-Match %s: got %d with %d bytes, want 304", path, inm, a.status, len(a.body))
			}
		}
		a = get(t, srv, path, map[string]string{"If-None-Match": `"other"`})
		if a.status != 200 || len(a.body) != f.size {
			t.Errorf("%s, If-None-Match of another tag: got %d with %d bytes", path, a.status, len(a.body))
		}
	}
	for _, path := range []string{"/static/nope", "/static/..%2Fsecret", "/static/", "/static/14k/x"} {
		if a := get(t, srv, path, nil); a.status != 404 {
			t.Errorf("GET %s: got %d %q, want 404", path, a.status, a.body)
		}
	}
}

func TestStaticWithoutFolder(t *testing.T) {
	if _, err := openStatic(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing folder opened")
	}
	if a := do(t, newServer(t, rootNone), "GET", "/static/14k", nil); a.status != 404 {
		t.Errorf("got %d, want 404", a.status)
	}
}

func postUpload(t *testing.T, srv *httptest.Server, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+"/upload", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func checkUpload(t *testing.T, a answer, sent []byte) {
	t.Helper()
	if a.status != 200 || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %v %q", a.status, a.header, a.body)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(a.body), &got); err != nil {
		t.Fatalf("answer is not JSON: %q", a.body)
	}
	digest := sha256.Sum256(sent)
	want := map[string]any{"length": float64(len(sent)), "sha256": hex.EncodeToString(digest[:])}
	if len(got) != 2 || got["length"] != want["length"] || got["sha256"] != want["sha256"] {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestUpload(t *testing.T) {
	srv := newServer(t, rootNone)
	// The contract's example: 1,024 zero bytes.
	a := postUpload(t, srv, bytes.NewReader(make([]byte, 1024)))
	if want := `{"length":1024,"sha256":"5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"}`; a.body != want {
		t.Errorf("1 KiB of zeros: got %q, want %q", a.body, want)
	}
	// 8 MiB of random bytes with a Content-Length, then chunked (a reader of
	// unknown length), then an empty body.
	body := make([]byte, 8<<20)
	rand.Read(body)
	checkUpload(t, postUpload(t, srv, bytes.NewReader(body)), body)
	checkUpload(t, postUpload(t, srv, io.MultiReader(bytes.NewReader(body[:3<<20]), bytes.NewReader(body[3<<20:]))), body)
	checkUpload(t, postUpload(t, srv, nil), nil)
}

// TestUploadTooLarge sends only the head of an oversized upload: the 413
// must come from the head alone, and the connection must close after it.
func TestUploadTooLarge(t *testing.T) {
	srv := newServer(t, rootNone)
	for _, length := range []string{"16777217", "10000000000"} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(conn, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"+
			"Content-Length: "+length+"\r\n\r\n")
		conn.Write(make([]byte, 64<<10))
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("Content-Length %s: %v", length, err)
		}
		io.ReadAll(resp.Body)
		if resp.StatusCode != 413 || !resp.Close {
			t.Errorf("Content-Length %s: got %d, close %v; want 413 and close", length, resp.StatusCode, resp.Close)
		}
		// Nothing more comes: the server closes the connection.
		if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Errorf("Content-Length %s: the connection stayed open (%d, %v)", length, n, err)
		}
	}

	// A chunked body that grows past 16 MiB is refused once it does.
	pr, pw := io.Pipe()
	go func() {
		chunk := make([]byte, 1<<20)
		for i := 0; i < 20; i++ {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", srv.URL+"/upload", pr)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pr.Close()
	if resp.StatusCode != 413 {
		t.Errorf("a chunked body of 20 MiB: got %d, want 413", resp.StatusCode)
	}
}

func postWork(t *testing.T, srv *httptest.Server, body, acceptEncoding string) (answer, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+"/work", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	// Without DisableCompression the client would ask for gzip itself and
	// decompress what it gets.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(raw)}, raw
}

func TestWorkCompressed(t *testing.T) {
	srv := newServer(t, rootNone)
	plain, _ := postWork(t, srv, exampleDoc, "")
	if plain.status != 200 || plain.header.Get("Content-Encoding") != "" {
		t.Fatalf("without Accept-Encoding: got %d %v", plain.status, plain.header)
	}
	for _, ae := range []string{"gzip", "GZIP", "deflate, gzip;q=0.5", "br, gzip", "*", "x-gzip"} {
		a, raw := postWork(t, srv, exampleDoc, ae)
		if a.status != 200 || a.header.Get("Content-Encoding") != "gzip" ||
			a.header.Get("Vary") != "Accept-Encoding" || a.header.Get("Content-Type") != "application/json" {
			t.Fatalf("Accept-Encoding %q: got %d %v", ae, a.status, a.header)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("Accept-Encoding %q: not gzip: %v", ae, err)
		}
		decoded, err := io.ReadAll(zr)
		if err != nil || string(decoded) != plain.body {
			t.Fatalf("Accept-Encoding %q: decoded %q (%v), want %q", ae, decoded, err, plain.body)
		}
	}
	// Go's standard library has no brotli: br alone gets the plain answer.
	for _, ae := range []string{"identity", "br", "gzip;q=0", "gzip; q=0.000, br", "*;q=0", "gzip;q=0, *"} {
		a, _ := postWork(t, srv, exampleDoc, ae)
		if a.status != 200 || a.header.Get("Content-Encoding") != "" || a.body != plain.body ||
			a.header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: got %d %v %q, want it plain", ae, a.status, a.header, a.body)
		}
	}
	if a, _ := postWork(t, srv, `{"product":`, "gzip"); a.status != 400 {
		t.Errorf("bad JSON with gzip allowed: got %d, want 400", a.status)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"gzip":                 true,
		"gzip;q=0.001":         true,
		" deflate , gzip ":     true,
		"*":                    true,
		"br;q=1, *;q=0.5":      true,
		"":                     false,
		"identity":             false,
		"gzip;q=0":             false,
		"gzip;q=0.0":           false,
		"gzip;q=0, *":          false,
		"*;q=0":                false,
		"gzipx, xgzip, br":     false,
		"deflate;q=0.5, gzip;": true,
	} {
		if got := acceptsGzip([]string{header}); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
	if !acceptsGzip([]string{"br", "gzip"}) {
		t.Error("gzip in a second Accept-Encoding line is not seen")
	}
}
