package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// contractRow1 is the contract's example answer for id 1, byte for byte.
const contractRow1 = `{"id":1,"name":"item-1","description":"Row 1 of the netbench items table: \"seeded\", fixed & checked.","quantity":31,"price":79.19,"updated":"2020-01-01T00:20:34.567Z"}`

// seededItem is row i as contract/db/schema.sql fills it, computed from the
// formulas so the db test does not trust the server for its expectations.
func seededItem(i int32) item {
	epoch := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	return item{
		ID:          i,
		Name:        fmt.Sprintf("item-%d", i),
		Description: fmt.Sprintf(`Row %d of the netbench items table: "seeded", fixed & checked.`, i),
		Quantity:    (i * 31) % 1000,
		Price:       float64((int64(i)*7919)%100000) / 100,
		Updated:     epoch.Add(time.Duration(i) * 1234567 * time.Millisecond).Format(dateLayout),
	}
}

func TestRenderItem(t *testing.T) {
	out, err := renderJSON(seededItem(1))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != contractRow1 {
		t.Fatalf("got  %s\nwant %s", out, contractRow1)
	}
	// An empty list is an empty array, not null.
	if out, _ := renderJSON(make([]item, 0)); string(out) != "[]" {
		t.Fatalf("empty list: got %s", out)
	}
	// Three digits of milliseconds even when they are zero, in UTC.
	ts := time.Date(2021, 7, 30, 23, 59, 59, 0, time.FixedZone("x", 2*3600)).UTC().Format(dateLayout)
	if ts != "2021-07-30T21:59:59.000Z" {
		t.Fatalf("timestamp: got %s", ts)
	}
}

func query(t *testing.T, raw string) url.Values {
	t.Helper()
	q, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestParseRowQuery(t *testing.T) {
	good := map[string]int32{"id=1": 1, "id=10000": 10000, "id=0": 0, "id=2147483647": 2147483647}
	for raw, want := range good {
		if got, err := parseRowQuery(query(t, raw)); err != nil || got != want {
			t.Errorf("%q: got %d, %v; want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "id=", "id=abc", "id=1.5", "id=2147483648", "id=99999999999", "id=1e3", "id= 1", "from=1"} {
		if got, err := parseRowQuery(query(t, raw)); err == nil {
			t.Errorf("%q: got %d, want an error", raw, got)
		}
	}
}

func TestParseListQuery(t *testing.T) {
	type fc struct{ from, count int32 }
	good := map[string]fc{
		"from=1":            {1, 100},
		"from=9999&count=5": {9999, 5},
		"from=1&count=1":    {1, 1},
		"from=1&count=1000": {1, 1000},
		"from=10001":        {10001, 100},
	}
	for raw, want := range good {
		from, count, err := parseListQuery(query(t, raw))
		if err != nil || (fc{from, count}) != want {
			t.Errorf("%q: got %d %d %v; want %v", raw, from, count, err, want)
		}
	}
	for _, raw := range []string{"", "from=", "from=x", "count=5", "from=1.5", "from=2147483648",
		"from=1&count=", "from=1&count=0", "from=1&count=1001", "from=1&count=abc", "from=1&count=-1"} {
		if from, count, err := parseListQuery(query(t, raw)); err == nil {
			t.Errorf("%q: got %d %d, want an error", raw, from, count)
		}
	}
}

func TestDBWithoutDatabase(t *testing.T) {
	srv := newServer(t, rootNone)
	for _, path := range []string{"/db?id=1", "/db/list?from=1"} {
		if a := do(t, srv, "GET", path, nil); a.status != 503 {
			t.Errorf("%s without a database: got %d %q, want 503", path, a.status, a.body)
		}
	}
}

// jsonOf decodes body into a generic value so answers compare by JSON value
// (key order and number spelling do not matter).
func jsonOf(t *testing.T, body string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not JSON: %v: %q", err, body)
	}
	return v
}

func wantJSON(t *testing.T, v any) any {
	t.Helper()
	out, err := renderJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return jsonOf(t, string(out))
}

// TestDB runs against a real PostgreSQL loaded with contract/db/schema.sql:
//
//	eval "$(PG_DEV_DIR=/tmp/pg-go ../../scripts/pg-dev.sh start)"; export DATABASE_URL
//	go test ./...
//	PG_DEV_DIR=/tmp/pg-go ../../scripts/pg-dev.sh stop
func TestDB(t *testing.T) {
	if os.Getenv("DATABASE_URL") == "" {
		t.Skip("DATABASE_URL is unset: no PostgreSQL to test /db against (scripts/pg-dev.sh start prints one)")
	}
	ctx := context.Background()
	pool, err := openPool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(newHandler(rootNone, pool, staticFiles{}, nil))
	t.Cleanup(srv.Close)

	for _, id := range []int32{1, 2, 999, 5000, 10000} {
		a := do(t, srv, "GET", fmt.Sprintf("/db?id=%d", id), nil)
		if a.status != 200 || a.header.Get("Content-Type") != "application/json" {
			t.Fatalf("id=%d: got %d %v %q", id, a.status, a.header, a.body)
		}
		if got, want := jsonOf(t, a.body), wantJSON(t, seededItem(id)); !reflect.DeepEqual(got, want) {
			t.Errorf("id=%d: got %v, want %v", id, got, want)
		}
	}

	lists := map[string][]int32{"/db/list?from=1": nil, "/db/list?from=42&count=1": {42},
		"/db/list?from=9999&count=5": {9999, 10000}, "/db/list?from=10001": {}, "/db/list?from=0&count=3": {1, 2, 3}}
	for i := int32(1); i <= 100; i++ {
		lists["/db/list?from=1"] = append(lists["/db/list?from=1"], i)
	}
	for path, ids := range lists {
		a := do(t, srv, "GET", path, nil)
		if a.status != 200 || a.header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: got %d %v %q", path, a.status, a.header, a.body)
		}
		want := make([]item, 0, len(ids))
		for _, id := range ids {
			want = append(want, seededItem(id))
		}
		if got, want := jsonOf(t, a.body), wantJSON(t, want); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", path, got, want)
		}
	}

	statuses := map[string]int{
		"/db?id=0": 404, "/db?id=10001": 404, "/db?id=2147483647": 404,
		"/db?id=abc": 400, "/db?id=1.5": 400, "/db?id=": 400, "/db": 400, "/db?id=2147483648": 400,
		"/db/list?from=1&count=0": 400, "/db/list?from=1&count=1001": 400, "/db/list": 400,
		"/db/list?from=abc": 400, "/db/list?from=2147483648": 400,
	}
	for path, want := range statuses {
		if a := do(t, srv, "GET", path, nil); a.status != want {
			t.Errorf("%s: got %d %q, want %d", path, a.status, a.body, want)
		}
	}

	// The answer follows the database: a change made through another
	// connection shows in the next answer (no cache). The row is put back.
	conn, err := pgx.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	const id = 7
	// Registered after the close, so it runs before it. The same formulas
	// as contract/db/schema.sql.
	t.Cleanup(func() {
		if _, err := conn.Exec(ctx, `UPDATE items SET quantity = (id * 31) % 1000,
			price = ((id * 7919) % 100000) / 100.0,
			updated = timestamptz '2020-01-01 00:00:00+00' + (id::bigint * 1234567) * interval '1 millisecond'
			WHERE id = $1`, id); err != nil {
			t.Errorf("restoring row %d: %v", id, err)
		}
	})
	if _, err := conn.Exec(ctx, `UPDATE items SET quantity = 4242, price = 12345.67, updated = '2024-02-29T12:34:56.000Z' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	changed := seededItem(id)
	changed.Quantity, changed.Price, changed.Updated = 4242, 12345.67, "2024-02-29T12:34:56.000Z"
	a := do(t, srv, "GET", fmt.Sprintf("/db?id=%d", id), nil)
	if got, want := jsonOf(t, a.body), wantJSON(t, changed); a.status != 200 || !reflect.DeepEqual(got, want) {
		t.Errorf("after an update: got %d %v, want %v", a.status, got, want)
	}
}
