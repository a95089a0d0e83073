package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The optional parts of contract 1.2: static, upload and json-comp.

// staticFiles serves GET /static/{name} from a folder (the build writes the
// contract's files into ./static with contract/static/make.py). Opening
// through an os.Root keeps every name inside the folder. root is nil when
// the folder is missing: every file is then 404.
type staticFiles struct {
	root *os.Root
}

// openStatic opens dir for /static/. A missing folder is not an error of the
// process (the server still offers everything else); the caller logs it.
func openStatic(dir string) (staticFiles, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return staticFiles{}, err
	}
	return staticFiles{root: root}, nil
}

// serve answers with http.ServeContent, which writes Content-Length and
// Last-Modified and answers If-None-Match (weak comparison) and
// If-Modified-Since with 304, Range with 206. net/http derives no ETag of
// its own, so it is set here from the file's size and modification time, as
// nginx and Apache derive theirs.
func (s staticFiles) serve(w http.ResponseWriter, r *http.Request) {
	if s.root == nil {
		http.NotFound(w, r)
		return
	}
	name := r.PathValue("name")
	f, err := s.root.Open(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", fmt.Sprintf(`"%x-%x"`, fi.ModTime().UnixNano(), fi.Size()))
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// uploadLimit is the largest upload body read (CONTRACT.md, "upload"):
// 16 MiB. A larger Content-Length is refused from the head.
const uploadLimit = 16 << 20

type uploadAnswer struct {
	Length int64  `json:"length"`
	SHA256 string `json:"sha256"`
}

// upload answers POST /upload with the length and SHA-256 of the body,
// hashed as it arrives (io.Copy into crypto/sha256), never held whole.
func upload(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > uploadLimit {
		// Not a byte of the body is read. With Connection: close net/http
		// ends the connection after the answer, shutting down its sending
		// side first and waiting briefly, so the client reads the 413.
		w.Header().Set("Connection", "close")
		writeText(w, http.StatusRequestEntityTooLarge, "body too large")
		return
	}
	h := sha256.New()
	// MaxBytesReader stops a chunked body that grows past the limit (and
	// makes net/http close the connection after the 413).
	n, err := io.Copy(h, http.MaxBytesReader(w, r.Body, uploadLimit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeText(w, http.StatusRequestEntityTooLarge, "body too large")
		} else {
			writeText(w, http.StatusBadRequest, "bad body")
		}
		return
	}
	writeJSON(w, uploadAnswer{Length: n, SHA256: hex.EncodeToString(h.Sum(nil))})
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip
// (RFC 9110 §12.5.3): gzip (or x-gzip, or *) listed without q=0. A coding
// named explicitly wins over *.
func acceptsGzip(header []string) bool {
	star := false
	for _, line := range header {
		for _, item := range strings.Split(line, ",") {
			name, params, _ := strings.Cut(item, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "x-gzip" && name != "*" {
				continue
			}
			allowed := !qZero(params)
			if name == "*" {
				star = allowed
				continue
			}
			return allowed
		}
	}
	return star
}

// qZero reports whether the parameters of an Accept-Encoding item set q to 0.
func qZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}

// gzipWriters keeps compress/gzip writers between answers, as Go's gzip
// middlewares do (a writer's compressor state is some hundred kilobytes);
// only writers are reused, never output.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// writeCompressible writes a 200 answer of contentType (json-comp's JSON,
// app's page), gzip-compressed (compress/gzip at its default level, whatever
// the size) when the request allows gzip. Go's standard library has no
// brotli: a request allowing only br gets it plain.
func writeCompressible(w http.ResponseWriter, r *http.Request, contentType string, out []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Vary", "Accept-Encoding")
	if acceptsGzip(r.Header.Values("Accept-Encoding")) {
		var buf bytes.Buffer
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(&buf)
		_, err := zw.Write(out)
		if err == nil {
			err = zw.Close()
		}
		gzipWriters.Put(zw)
		if err == nil {
			out = buf.Bytes()
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}
