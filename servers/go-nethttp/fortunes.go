package main

import (
	"bytes"
	"html/template"
	"net/http"
	"sort"
	"strconv"
)

// fortunesQuery reads the whole fortune table (contract, "fortunes").
const fortunesQuery = `SELECT id, message FROM fortune`

// addedFortune is the row every page adds for its request only.
const addedFortune = "Additional fortune added at request time."

// fortunesPage is rendered by html/template, whose contextual escaping turns
// the <script> row (and anything else in a message) into text.
var fortunesPage = template.Must(template.New("fortunes").Parse(
	`<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>` +
		`{{range .}}<tr><td>{{.ID}}</td><td>{{.Message}}</td></tr>{{end}}` +
		`</table></body></html>`))

type fortune struct {
	ID      int32
	Message string
}

// renderFortunes is the page for the rows read: the added row joins them, and
// all are sorted by message (Go compares strings by bytes, which for UTF-8 is
// by code point, as the contract sorts).
func renderFortunes(list []fortune) (*bytes.Buffer, error) {
	list = append(list, fortune{ID: 0, Message: addedFortune})
	sort.Slice(list, func(i, j int) bool { return list[i].Message < list[j].Message })
	var page bytes.Buffer
	if err := fortunesPage.Execute(&page, list); err != nil {
		return nil, err
	}
	return &page, nil
}

// fortunes serves GET /fortunes: every row read for this request, rendered.
func (d dbHandlers) fortunes(w http.ResponseWriter, r *http.Request) {
	if d.pool == nil {
		writeText(w, http.StatusServiceUnavailable, "no database (DATABASE_URL is unset)")
		return
	}
	rows, err := d.pool.Query(r.Context(), fortunesQuery)
	if err != nil {
		dbError(w, r, err)
		return
	}
	list := make([]fortune, 0, 16)
	for rows.Next() {
		var f fortune
		if err := rows.Scan(&f.ID, &f.Message); err != nil {
			rows.Close()
			dbError(w, r, err)
			return
		}
		list = append(list, f)
	}
	if err := rows.Err(); err != nil {
		dbError(w, r, err)
		return
	}
	page, err := renderFortunes(list)
	if err != nil {
		writeText(w, http.StatusInternalServerError, "cannot render the page")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(page.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(page.Bytes())
}
