// app_test.go tests contract 1.4's app part end to end through net/http: the
// sessions, the page's rows against the formula, the files, gzip, the lock,
// logout and the 400s.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const contractApp = "../../contract/app"

func newAppServer(t *testing.T) *httptest.Server {
	t.Helper()
	app, err := loadApp(contractApp)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newHandler(rootNone, nil, staticFiles{}, app))
	t.Cleanup(srv.Close)
	return srv
}

type appAnswer struct {
	status  int
	header  http.Header
	raw     []byte // as sent
	body    string // decoded when gzip
	cookies []*http.Cookie
}

// fetch sends one request with the cookie sid=cookie (none when empty) and
// Accept-Encoding ae (none when empty), and decodes a gzip body.
func fetch(client *http.Client, method, url, cookie, ae string) (appAnswer, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return appAnswer{}, err
	}
	if cookie != "" {
		req.Header.Set("Cookie", "sid="+cookie)
	}
	if ae != "" {
		req.Header.Set("Accept-Encoding", ae)
	}
	resp, err := client.Do(req)
	if err != nil {
		return appAnswer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return appAnswer{}, err
	}
	a := appAnswer{status: resp.StatusCode, header: resp.Header, raw: raw, body: string(raw), cookies: resp.Cookies()}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return a, fmt.Errorf("not gzip: %v", err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			return a, fmt.Errorf("bad gzip: %v", err)
		}
		a.body = string(plain)
	}
	return a, nil
}

func appRequest(t *testing.T, client *http.Client, method, url, cookie, ae string) appAnswer {
	t.Helper()
	a, err := fetch(client, method, url, cookie, ae)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// plainClient neither asks for gzip nor undoes it by itself (net/http's
// Transport would otherwise do both).
func plainClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
}

var (
	tdCell    = regexp.MustCompile(`(?s)<td>(.*?)</td>`)
	reference = regexp.MustCompile(`&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);`)
	visitsRow = regexp.MustCompile(`<td>visits</td><td>([0-9]+)</td>`)
)

// cells are the page's <td> texts, references decoded and ends trimmed, as
// the contract reads them back; a raw '<', or a '&' that starts no
// reference, fails the test.
func cells(t *testing.T, page string) []string {
	t.Helper()
	var out []string
	for _, m := range tdCell.FindAllStringSubmatch(page, -1) {
		raw := m[1]
		if strings.Contains(raw, "<") || strings.Contains(reference.ReplaceAllString(raw, ""), "&") {
			t.Fatalf("raw < or & in a cell: %q", raw)
		}
		out = append(out, strings.TrimSpace(html.UnescapeString(raw)))
	}
	return out
}

// pageOK checks a 200 page and returns its visits and since.
func pageOK(t *testing.T, a appAnswer, k int) (visits, since int64) {
	t.Helper()
	if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
		t.Fatalf("page=%d: got %d %v %.200q", k, a.status, a.header, a.body)
	}
	c := cells(t, a.body)
	if len(c) != 4+50*5 || c[0] != "visits" || c[2] != "since" {
		t.Fatalf("page=%d: %d cells, first %q", k, len(c), c[:min(4, len(c))])
	}
	visits, err1 := strconv.ParseInt(c[1], 10, 64)
	since, err2 := strconv.ParseInt(c[3], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("page=%d: visits %q, since %q", k, c[1], c[3])
	}
	return visits, since
}

func sidOf(t *testing.T, a appAnswer) string {
	t.Helper()
	var ids []string
	for _, c := range a.cookies {
		if c.Name == "sid" {
			ids = append(ids, c.Value)
		}
	}
	if len(ids) != 1 || len(a.header.Values("Set-Cookie")) != 1 {
		t.Fatalf("want exactly one Set-Cookie, got %q", a.header.Values("Set-Cookie"))
	}
	if n := len(ids[0]); n < 16 || n > 128 {
		t.Fatalf("session id of %d characters: %q", n, ids[0])
	}
	return ids[0]
}

func TestAppSessions(t *testing.T) {
	srv := newAppServer(t)
	c := plainClient()
	url := srv.URL + "/app?page=1"
	first := appRequest(t, c, "GET", url, "", "")
	a := sidOf(t, first)
	v, sinceA := pageOK(t, first, 1)
	if v != 1 || time.Since(time.UnixMilli(sinceA)).Abs() > time.Minute {
		t.Fatalf("new session: visits %d, since %d", v, sinceA)
	}
	second := appRequest(t, c, "GET", url, "", "")
	b := sidOf(t, second)
	if a == b {
		t.Fatalf("two sessions share id %q", a)
	}
	// Interleaved: each counts on its own.
	for want := int64(2); want <= 3; want++ {
		for _, id := range []string{a, b} {
			got := appRequest(t, c, "GET", url, id, "")
			v, since := pageOK(t, got, 1)
			if v != want {
				t.Fatalf("session %s: visits %d, want %d", id, v, want)
			}
			if id == a && since != sinceA {
				t.Fatalf("since moved: %d then %d", sinceA, since)
			}
			if n := len(got.header.Values("Set-Cookie")); n != 0 {
				t.Fatalf("Set-Cookie on an existing session: %q", got.header.Values("Set-Cookie"))
			}
		}
	}
	// Other cookies beside ours are ignored.
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Cookie", "theme=dark; sid="+a+"; lang=en")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if v, _ := pageOK(t, appAnswer{status: resp.StatusCode, header: resp.Header, body: string(body)}, 1); v != 4 {
		t.Fatalf("with other cookies: visits %d, want 4", v)
	}
}

func TestAppIDs(t *testing.T) {
	srv := newAppServer(t)
	c := plainClient()
	seen := map[string]bool{}
	for range 20 {
		id := sidOf(t, appRequest(t, c, "GET", srv.URL+"/app?page=2", "", ""))
		if seen[id] {
			t.Fatalf("id %q given twice", id)
		}
		seen[id] = true
	}
	// A made-up cookie names no session: a new one, with a new id.
	const madeUp = "0123456789abcdef0123456789abcdef"
	a := appRequest(t, c, "GET", srv.URL+"/app?page=2", madeUp, "")
	if id := sidOf(t, a); id == madeUp || seen[id] {
		t.Fatalf("made-up cookie got id %q", id)
	}
	if v, _ := pageOK(t, a, 2); v != 1 {
		t.Fatalf("made-up cookie: visits %d, want 1", v)
	}
}

// money writes cents as the contract does: 5 is 0.05.
func money(c int) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }

func TestAppPageRows(t *testing.T) {
	srv := newAppServer(t)
	c := plainClient()
	labels := []string{
		`Tom & Jerry's cheese board`,
		`<b>bold</b> move of the week`,
		`"Quoted" goods, boxed`,
		`O'Brien's pick for winter`,
		`a < b > c, the ordered set`,
	}
	for _, k := range []int{1, 4711, 99999, 100000} {
		a := appRequest(t, c, "GET", fmt.Sprintf("%s/app?page=%d", srv.URL, k), "", "")
		pageOK(t, a, k)
		if want := fmt.Sprintf("<title>Orders, page %d</title>", k); !strings.Contains(a.body, want) {
			t.Fatalf("page=%d: no %q", k, want)
		}
		got := cells(t, a.body)[4:]
		for i := 1; i <= 50; i++ {
			q := (k*7+i*13)%100 + 1
			price := (k*7919 + i*104729) % 100000
			want := []string{
				strconv.Itoa((k-1)*50 + i),
				fmt.Sprintf("%s, no. %d.%d", labels[(k+i)%5], k, i),
				strconv.Itoa(q),
				money(price),
				money(q * price),
			}
			row := got[(i-1)*5 : i*5]
			for j := range want {
				if row[j] != want[j] {
					t.Fatalf("page=%d row %d: got %q, want %q", k, i, row, want)
				}
			}
		}
	}
	if money(5) != "0.05" || money(99999) != "999.99" {
		t.Fatal("money")
	}
}

func TestAppEscapesAndFiles(t *testing.T) {
	srv := newAppServer(t)
	a := appRequest(t, plainClient(), "GET", srv.URL+"/app?page=3", "", "")
	pageOK(t, a, 3)
	for _, raw := range []string{"Tom & Jerry", "<b>bold", "a < b > c", `"Quoted"`, "O'Brien"} {
		if strings.Contains(a.body, raw) {
			t.Errorf("unescaped %q in the page", raw)
		}
	}
	for _, name := range []string{"app.css", "app.js"} {
		want, err := os.ReadFile(contractApp + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(a.body, string(want)) {
			t.Errorf("%s is not in the page byte for byte", name)
		}
	}
	if !strings.Contains(a.body, "<style>") || !strings.Contains(a.body, "<script>") {
		t.Error("no <style> or <script>")
	}
	if a.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", a.header.Get("Cache-Control"))
	}
}

func TestAppGzip(t *testing.T) {
	srv := newAppServer(t)
	c := plainClient()
	for _, ae := range []string{"gzip", "gzip, deflate, br", "*"} {
		a := appRequest(t, c, "GET", srv.URL+"/app?page=7", "", ae)
		if a.header.Get("Content-Encoding") != "gzip" || a.header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("%q: %v", ae, a.header)
		}
		if len(a.raw) >= len(a.body) {
			t.Fatalf("%q: %d bytes sent for a page of %d", ae, len(a.raw), len(a.body))
		}
		pageOK(t, a, 7)
	}
	for _, ae := range []string{"", "identity", "gzip;q=0", "br"} {
		a := appRequest(t, c, "GET", srv.URL+"/app?page=7", "", ae)
		if a.header.Get("Content-Encoding") != "" {
			t.Fatalf("%q: encoded %v", ae, a.header)
		}
		pageOK(t, a, 7)
	}
}

func TestAppLock(t *testing.T) {
	srv := newAppServer(t)
	c := plainClient()
	id := sidOf(t, appRequest(t, c, "GET", srv.URL+"/app?page=1", "", ""))
	const workers, each = 8, 25
	visits := make([][]int, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A connection of its own per worker, as netbench's are.
			client := plainClient()
			for n := range each {
				a, err := fetch(client, "GET", fmt.Sprintf("%s/app?page=%d", srv.URL, w*each+n+1), id, "gzip")
				m := visitsRow.FindStringSubmatch(a.body)
				if err != nil || a.status != 200 || m == nil {
					errs[w] = fmt.Errorf("worker %d: %d %v %.100q", w, a.status, err, a.body)
					return
				}
				v, _ := strconv.Atoi(m[1])
				visits[w] = append(visits[w], v)
			}
		}()
	}
	wg.Wait()
	seen := map[int]int{}
	for w := range workers {
		if errs[w] != nil {
			t.Fatal(errs[w])
		}
		for _, v := range visits[w] {
			seen[v]++
		}
	}
	for v := 2; v <= workers*each+1; v++ {
		if seen[v] != 1 {
			t.Fatalf("visits %d seen %d times", v, seen[v])
		}
	}
	if len(seen) != workers*each {
		t.Fatalf("%d distinct visits, want %d", len(seen), workers*each)
	}
}

func TestAppLogout(t *testing.T) {
	srv := newAppServer(t)
	c := plainClient()
	url := srv.URL + "/app?page=9"
	old := sidOf(t, appRequest(t, c, "GET", url, "", ""))
	appRequest(t, c, "GET", url, old, "")
	if a := appRequest(t, c, "POST", srv.URL+"/app/logout", old, ""); a.status != 200 {
		t.Fatalf("logout: %d", a.status)
	}
	a := appRequest(t, c, "GET", url, old, "")
	if id := sidOf(t, a); id == old {
		t.Fatal("the ended session's id came back")
	}
	if v, _ := pageOK(t, a, 9); v != 1 {
		t.Fatalf("after logout: visits %d, want 1", v)
	}
	// Without a cookie, or with a dead one: 200 too.
	for _, cookie := range []string{"", old} {
		if a := appRequest(t, c, "POST", srv.URL+"/app/logout", cookie, ""); a.status != 200 {
			t.Fatalf("logout with %q: %d", cookie, a.status)
		}
	}
}

func TestAppErrors(t *testing.T) {
	srv := newAppServer(t)
	c := plainClient()
	id := sidOf(t, appRequest(t, c, "GET", srv.URL+"/app?page=1", "", ""))
	for _, q := range []string{"?page=0", "?page=100001", "?page=abc", "?page=", "", "?other=1",
		"?page=-1", "?page=%2B1", "?page=1.5", "?page=%201", "?page=1e3", "?page=99999999999999999999999"} {
		a := appRequest(t, c, "GET", srv.URL+"/app"+q, id, "")
		if a.status != 400 {
			t.Errorf("/app%s: got %d, want 400", q, a.status)
		}
	}
	// The 400s left the session alone.
	if v, _ := pageOK(t, appRequest(t, c, "GET", srv.URL+"/app?page=100000", id, ""), 100000); v != 2 {
		t.Fatalf("after the 400s: visits %d, want 2", v)
	}
	if a := appRequest(t, c, "GET", srv.URL+"/app?page=007", id, ""); a.status != 200 {
		t.Errorf("page=007: got %d", a.status)
	}
}

func TestAppWithoutFiles(t *testing.T) {
	srv := newServer(t, rootNone)
	if a := appRequest(t, plainClient(), "GET", srv.URL+"/app?page=1", "", ""); a.status != 503 {
		t.Fatalf("without the files: got %d, want 503", a.status)
	}
}

func TestSessionSweep(t *testing.T) {
	s := newSessionStore()
	t0 := time.UnixMilli(1_700_000_000_000)
	idle, _ := s.get("", t0)
	busy, _ := s.get("", t0)
	if got, created := s.get(busy.id, t0.Add(5*time.Minute)); got != busy || created {
		t.Fatal("a live session was not found")
	}
	// A creation past the sweep interval sweeps: idle has gone ten minutes
	// without a request, busy five.
	s.get("", t0.Add(sessionIdle))
	if _, created := s.get(idle.id, t0.Add(sessionIdle)); !created {
		t.Fatal("a session idle for 10 minutes survived the sweep")
	}
	if got, created := s.get(busy.id, t0.Add(sessionIdle)); got != busy || created {
		t.Fatal("a session used 5 minutes ago was swept")
	}
}
