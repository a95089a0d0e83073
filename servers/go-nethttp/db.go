package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// defaultPoolSize is the pool's maximum when DATABASE_POOL_SIZE is unset: the
// contract's floor ("at least 4").
const defaultPoolSize = 4

// defaultListCount and maxListCount are the contract's rules for /db/list.
const (
	defaultListCount = 100
	maxListCount     = 1000
)

// The price is cast to float8 in SQL so that it scans into a float64 and is
// written as a JSON number; numeric(8,2) fits a double exactly enough (the
// contract says so). pgx prepares and caches each statement on every
// connection of the pool by default, so both are sent as prepared statements.
const (
	rowQuery  = `SELECT id, name, description, quantity, price::float8, updated FROM items WHERE id = $1`
	listQuery = `SELECT id, name, description, quantity, price::float8, updated FROM items WHERE id >= $1 ORDER BY id LIMIT $2`
)

// item is one row of the items table as the contract writes it. Updated is
// kept as text because encoding/json would write time.Time as RFC 3339 with
// nanoseconds and a variable number of digits.
type item struct {
	ID          int32   `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Quantity    int32   `json:"quantity"`
	Price       float64 `json:"price"`
	Updated     string  `json:"updated"`
}

var errBadParam = errors.New("bad parameter")

// openPool connects to DATABASE_URL with at most DATABASE_POOL_SIZE
// connections. Without DATABASE_URL it returns a nil pool: the server still
// serves everything else, and /db answers 503.
func openPool(ctx context.Context) (*pgxpool.Pool, error) {
	dsn := os.Getenv("DATABASE_URL")
	if dsn == "" {
		return nil, nil
	}
	size := defaultPoolSize
	if s := os.Getenv("DATABASE_POOL_SIZE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1<<15 {
			return nil, fmt.Errorf("DATABASE_POOL_SIZE %q is not a positive integer", s)
		}
		size = n
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	cfg.MaxConns = int32(size)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The pool connects lazily; a ping at start makes a wrong URL or a
	// database that is down show in the log at once rather than as 500s
	// under load. It is not fatal: the other endpoints do not need it.
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		log.Printf("database not reachable yet (/db will answer 500 until it is): %v", err)
	}
	return pool, nil
}

// parseInt32 takes what the contract calls an integer: a decimal that fits a
// 32-bit signed integer. ParseInt already refuses "", "1.5", "abc" and
// anything out of range.
func parseInt32(s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, errBadParam
	}
	return int32(n), nil
}

// parseRowQuery reads /db's parameters: id, required.
func parseRowQuery(q url.Values) (int32, error) {
	return parseInt32(q.Get("id"))
}

// parseListQuery reads /db/list's parameters: from, required, and count,
// optional (default 100) but, when present, an integer from 1 to 1,000 (so
// "count=" is an error, not the default).
func parseListQuery(q url.Values) (from, count int32, err error) {
	if from, err = parseInt32(q.Get("from")); err != nil {
		return 0, 0, err
	}
	count = defaultListCount
	if q.Has("count") {
		if count, err = parseInt32(q.Get("count")); err != nil {
			return 0, 0, err
		}
		if count < 1 || count > maxListCount {
			return 0, 0, errBadParam
		}
	}
	return from, count, nil
}

// scanItem reads one row in the column order of rowQuery and listQuery.
func scanItem(row pgx.Row) (item, error) {
	var it item
	var updated time.Time
	if err := row.Scan(&it.ID, &it.Name, &it.Description, &it.Quantity, &it.Price, &updated); err != nil {
		return item{}, err
	}
	it.Updated = updated.UTC().Format(dateLayout)
	return it, nil
}

// renderJSON encodes v without encoding/json's HTML escaping, so that "&" in
// the description is written as it is, as in the contract's example (either
// spelling is JSON-equal; this one is shorter and readable).
func renderJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func writeJSON(w http.ResponseWriter, v any) {
	out, err := renderJSON(v)
	if err != nil {
		writeText(w, http.StatusInternalServerError, "cannot encode answer")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// dbHandlers serves /db and /db/list from the pool, or 503 without one.
type dbHandlers struct {
	pool *pgxpool.Pool
}

func (d dbHandlers) row(w http.ResponseWriter, r *http.Request) {
	if d.pool == nil {
		writeText(w, http.StatusServiceUnavailable, "no database (DATABASE_URL is unset)")
		return
	}
	id, err := parseRowQuery(r.URL.Query())
	if err != nil {
		writeText(w, http.StatusBadRequest, "id must be a 32-bit integer")
		return
	}
	it, err := scanItem(d.pool.QueryRow(r.Context(), rowQuery, id))
	if errors.Is(err, pgx.ErrNoRows) {
		writeText(w, http.StatusNotFound, "no such row")
		return
	}
	if err != nil {
		dbError(w, r, err)
		return
	}
	writeJSON(w, it)
}

func (d dbHandlers) list(w http.ResponseWriter, r *http.Request) {
	if d.pool == nil {
		writeText(w, http.StatusServiceUnavailable, "no database (DATABASE_URL is unset)")
		return
	}
	from, count, err := parseListQuery(r.URL.Query())
	if err != nil {
		writeText(w, http.StatusBadRequest, "from must be a 32-bit integer, count one from 1 to 1000")
		return
	}
	rows, err := d.pool.Query(r.Context(), listQuery, from, count)
	if err != nil {
		dbError(w, r, err)
		return
	}
	// Not nil: an empty result is written as [], not null.
	items := make([]item, 0, count)
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			rows.Close()
			dbError(w, r, err)
			return
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		dbError(w, r, err)
		return
	}
	writeJSON(w, items)
}

// dbError answers 500. A query cancelled because the client went away is
// not worth a log line; anything else is, since it only happens when the
// database is in trouble.
func dbError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() == nil {
		log.Printf("%s: %v", r.URL.Path, err)
	}
	writeText(w, http.StatusInternalServerError, "database error")
}
