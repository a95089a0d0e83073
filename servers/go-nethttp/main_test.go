package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

const exampleDoc = `{
  "product": "WidgetPro-7",
  "requestId": "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",
  "group": {
    "kind": "retail",
    "default": true,
    "balance": 1234.56,
    "dates": ["2020-01-12T10:53:17.773Z", "2019-03-01T00:00:00.000Z", "2021-07-30T23:59:59.999Z"]
  }
}`

type answer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, srv *httptest.Server, method, path string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
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
	if resp.Header.Get("Date") == "" {
		t.Errorf("%s %s: no Date header", method, path)
	} else if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil {
		t.Errorf("%s %s: bad Date header: %v", method, path, err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func newServer(t *testing.T, root rootMode) *httptest.Server {
	srv := httptest.NewServer(newHandler(root, nil, staticFiles{}, nil))
	t.Cleanup(srv.Close)
	return srv
}

func TestBlank(t *testing.T) {
	a := do(t, newServer(t, rootNone), "GET", "/blank", nil)
	if a.status != 200 || a.body != "OK" || a.header.Get("Content-Type") != "text/plain" ||
		a.header.Get("Content-Length") != "2" {
		t.Fatalf("got %d %q %v", a.status, a.body, a.header)
	}
}

func checkWork(t *testing.T, a answer, want map[string]any) {
	t.Helper()
	if a.status != 200 || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %v %q", a.status, a.header, a.body)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(a.body), &got); err != nil {
		t.Fatalf("answer is not JSON: %v: %q", err, a.body)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestWork(t *testing.T) {
	srv := newServer(t, rootNone)
	want := map[string]any{
		"product":   "WidgetPro-7",
		"requestId": "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",
		"client": map[string]any{
			"balance": 1234.56,
			"minDate": "2019-03-01T00:00:00.000Z",
			"maxDate": "2021-07-30T23:59:59.999Z",
		},
	}
	checkWork(t, do(t, srv, "POST", "/work", strings.NewReader(exampleDoc)), want)

	// A body of unknown length is sent with Transfer-Encoding: chunked.
	chunked := io.MultiReader(strings.NewReader(exampleDoc[:40]), strings.NewReader(exampleDoc[40:]))
	checkWork(t, do(t, srv, "POST", "/work", chunked), want)

	// Milliseconds of 000 are written, an extra field is ignored, a single
	// date is both minimum and maximum.
	doc := `{"x":[1],"product":"p","requestId":"r","group":{"kind":"k","default":false,` +
		`"balance":-1.5e3,"dates":["2000-01-01T00:00:00.000Z"],"extra":null}}`
	checkWork(t, do(t, srv, "POST", "/work", strings.NewReader(doc)), map[string]any{
		"product":   "p",
		"requestId": "r",
		"client": map[string]any{
			"balance": -1500.0,
			"minDate": "2000-01-01T00:00:00.000Z",
			"maxDate": "2000-01-01T00:00:00.000Z",
		},
	})
}

func TestWorkBadRequest(t *testing.T) {
	srv := newServer(t, rootNone)
	withGroup := func(group string) string {
		return `{"product":"p","requestId":"r","group":` + group + `}`
	}
	bad := map[string]string{
		"not JSON":          `{"product":`,
		"trailing garbage":  withGroup(`{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}`) + `x`,
		"not an object":     `[1,2]`,
		"null":              `null`,
		"empty body":        ``,
		"missing product":   `{"requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}}`,
		"missing requestId": `{"product":"p","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}}`,
		"missing group":     `{"product":"p","requestId":"r"}`,
		"group not object":  withGroup(`"g"`),
		"missing kind":      withGroup(`{"default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}`),
		"missing default":   withGroup(`{"kind":"k","balance":1,"dates":["2020-01-12T10:53:17.773Z"]}`),
		"missing balance":   withGroup(`{"kind":"k","default":true,"dates":["2020-01-12T10:53:17.773Z"]}`),
		"missing dates":     withGroup(`{"kind":"k","default":true,"balance":1}`),
		"null product":      `{"product":null,"requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}}`,
		"product number":    `{"product":7,"requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}}`,
		"default string":    withGroup(`{"kind":"k","default":"yes","balance":1,"dates":["2020-01-12T10:53:17.773Z"]}`),
		"balance string":    withGroup(`{"kind":"k","default":true,"balance":"1","dates":["2020-01-12T10:53:17.773Z"]}`),
		"dates string":      withGroup(`{"kind":"k","default":true,"balance":1,"dates":"2020-01-12T10:53:17.773Z"}`),
		"date number":       withGroup(`{"kind":"k","default":true,"balance":1,"dates":[1]}`),
		"date null":         withGroup(`{"kind":"k","default":true,"balance":1,"dates":[null]}`),
		"empty dates":       withGroup(`{"kind":"k","default":true,"balance":1,"dates":[]}`),
		"invalid date":      withGroup(`{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z","2020-13-45T99:00:00.000Z"]}`),
		"signed fraction":   withGroup(`{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.+01Z"]}`),
		"yesterday":         withGroup(`{"kind":"k","default":true,"balance":1,"dates":["yesterday"]}`),
		"30 February":       withGroup(`{"kind":"k","default":true,"balance":1,"dates":["2020-02-30T00:00:00.000Z"]}`),
		"no milliseconds":   withGroup(`{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17Z"]}`),
		"comma":             withGroup(`{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17,773Z"]}`),
		"offset":            withGroup(`{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773+01:00"]}`),
	}
	for name, body := range bad {
		t.Run(name, func(t *testing.T) {
			a := do(t, srv, "POST", "/work", strings.NewReader(body))
			if a.status != 400 {
				t.Fatalf("got %d %q, want 400", a.status, a.body)
			}
			if a.header.Get("Content-Length") == "" {
				t.Fatalf("400 without Content-Length: %v", a.header)
			}
		})
	}
}

func TestEcho(t *testing.T) {
	srv := newServer(t, rootNone)
	for path, want := range map[string]string{
		"/echo/abc-1.2_x~y":  "abc-1.2_x~y",
		"/echo/hello?q=1&r":  "hello",
		"/echo/":             "",
		"/echo/Z9-._~Z9-._~": "Z9-._~Z9-._~",
	} {
		a := do(t, srv, "GET", path, nil)
		if a.status != 200 || a.body != want || a.header.Get("Content-Type") != "text/plain" {
			t.Errorf("%s: got %d %q %v", path, a.status, a.body, a.header)
		}
	}
}

func TestNotFound(t *testing.T) {
	srv := newServer(t, rootNone)
	for _, path := range []string{"/nope", "/", "/echo", "/blank/x", "/workx"} {
		if a := do(t, srv, "GET", path, nil); a.status != 404 {
			t.Errorf("GET %s: got %d, want 404", path, a.status)
		}
	}
	if a := do(t, srv, "POST", "/", strings.NewReader(exampleDoc)); a.status != 404 {
		t.Errorf("POST /: got %d, want 404", a.status)
	}
	// A known path with another method: 404 or 405.
	if a := do(t, srv, "GET", "/work", nil); a.status != 404 && a.status != 405 {
		t.Errorf("GET /work: got %d, want 404 or 405", a.status)
	}
}

func TestRootCompat(t *testing.T) {
	a := do(t, newServer(t, rootBlank), "GET", "/", nil)
	if a.status != 200 || a.body != "OK" {
		t.Errorf("mode 0: GET / got %d %q", a.status, a.body)
	}
	a = do(t, newServer(t, rootWork), "POST", "/", strings.NewReader(exampleDoc))
	if a.status != 200 || !strings.Contains(a.body, `"minDate":"2019-03-01T00:00:00.000Z"`) {
		t.Errorf("mode 1: POST / got %d %q", a.status, a.body)
	}
}

func TestDateHeaderChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("sleeps 1.1 s")
	}
	srv := newServer(t, rootNone)
	first := do(t, srv, "GET", "/blank", nil).header.Get("Date")
	time.Sleep(1100 * time.Millisecond)
	if second := do(t, srv, "GET", "/blank", nil).header.Get("Date"); second == first {
		t.Errorf("Date did not change over 1.1 s: %q", first)
	}
}
