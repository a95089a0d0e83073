package main

import (
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// The World table of contract 1.3's queries and updates parts.
const (
	worldRows   = 10000
	maxQueries  = 500
	worldQuery  = `SELECT id, randomnumber FROM world WHERE id = $1`
	worldUpdate = `UPDATE world SET randomnumber = $1 WHERE id = $2`
)

type worldRow struct {
	ID           int32 `json:"id"`
	RandomNumber int32 `json:"randomNumber"`
}

// queriesParam clamps ?queries=N as TechEmpower does: missing, empty, not an
// integer or below 1 is 1; above 500 is 500.
func queriesParam(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("queries"))
	switch {
	case err != nil || n < 1:
		return 1
	case n > maxQueries:
		return maxQueries
	}
	return n
}

// readWorld reads n random rows, each with its own query (a prepared
// statement, cached per pooled connection by pgx).
func (d dbHandlers) readWorld(r *http.Request, n int) ([]worldRow, error) {
	rows := make([]worldRow, n)
	for i := range rows {
		id := int32(1 + rand.IntN(worldRows))
		if err := d.pool.QueryRow(r.Context(), worldQuery, id).Scan(&rows[i].ID, &rows[i].RandomNumber); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// queries serves GET /queries?queries=N.
func (d dbHandlers) queries(w http.ResponseWriter, r *http.Request) {
	if d.pool == nil {
		writeText(w, http.StatusServiceUnavailable, "no database (DATABASE_URL is unset)")
		return
	}
	rows, err := d.readWorld(r, queriesParam(r))
	if err != nil {
		dbError(w, r, err)
		return
	}
	writeJSON(w, rows)
}

// updates serves GET /updates?queries=N: the rows read one by one, each
// given a new random number, and written in one pgx batch (one round trip,
// one statement per row, in id order).
func (d dbHandlers) updates(w http.ResponseWriter, r *http.Request) {
	if d.pool == nil {
		writeText(w, http.StatusServiceUnavailable, "no database (DATABASE_URL is unset)")
		return
	}
	rows, err := d.readWorld(r, queriesParam(r))
	if err != nil {
		dbError(w, r, err)
		return
	}
	for i := range rows {
		rows[i].RandomNumber = int32(1 + rand.IntN(worldRows))
	}
	// pgx runs a batch as one transaction: written in id order, two
	// requests that share rows lock them in the same order and cannot
	// deadlock (in draw order PostgreSQL aborts one of them). The answer
	// keeps the draw order.
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return rows[order[a]].ID < rows[order[b]].ID })
	batch := &pgx.Batch{}
	for _, i := range order {
		batch.Queue(worldUpdate, rows[i].RandomNumber, rows[i].ID)
	}
	if err := d.pool.SendBatch(r.Context(), batch).Close(); err != nil {
		dbError(w, r, err)
		return
	}
	writeJSON(w, rows)
}
