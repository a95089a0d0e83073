package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// rootMode says what "/" answers (the optional first argument).
type rootMode int

const (
	rootNone  rootMode = iota // "/" is an unknown path: 404
	rootBlank                 // argument "0": "/" answers as /blank
	rootWork                  // argument "1": "/" answers as /work
)

// maxBodyBytes bounds a /work request body.
const maxBodyBytes = 1 << 20

// dateLayout is the contract's timestamp format, YYYY-MM-DDTHH:MM:SS.sssZ:
// always three digits of milliseconds and a literal Z (UTC).
const dateLayout = "2006-01-02T15:04:05.000Z"

// newHandler returns the routes of the contract. pool may be nil (no
// DATABASE_URL): /db, /db/list, /fortunes, /queries and /updates then answer 503. static serves /static/.
// app serves /app and /app/logout; nil (or without its files) /app answers 503.
func newHandler(root rootMode, pool *pgxpool.Pool, static staticFiles, app *appHandlers) http.Handler {
	if app == nil {
		app = &appHandlers{sessions: newSessionStore()}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /blank", blank)
	mux.HandleFunc("POST /work", work)
	mux.HandleFunc("GET /echo/", echo)
	db := dbHandlers{pool: pool}
	mux.HandleFunc("GET /db", db.row)
	mux.HandleFunc("GET /db/list", db.list)
	mux.HandleFunc("GET /fortunes", db.fortunes)
	mux.HandleFunc("GET /queries", db.queries)
	mux.HandleFunc("GET /updates", db.updates)
	mux.HandleFunc("GET /ws", wsEcho)
	mux.HandleFunc("GET /static/{name}", static.serve)
	mux.HandleFunc("POST /upload", upload)
	mux.HandleFunc("GET /app", app.page)
	mux.HandleFunc("POST /app/logout", app.logout)
	// Without this, ServeMux would redirect "/echo" to "/echo/".
	mux.HandleFunc("/echo", http.NotFound)
	switch root {
	case rootBlank:
		mux.HandleFunc("GET /{$}", blank)
	case rootWork:
		mux.HandleFunc("POST /{$}", work)
	}
	return mux
}

func writeText(w http.ResponseWriter, status int, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func blank(w http.ResponseWriter, r *http.Request) {
	writeText(w, http.StatusOK, "OK")
}

func echo(w http.ResponseWriter, r *http.Request) {
	writeText(w, http.StatusOK, strings.TrimPrefix(r.URL.Path, "/echo/"))
}

// workRequest is the /work document. Pointer fields tell a missing (or null)
// field from a zero value; a field of the wrong type makes json.Unmarshal fail.
type workRequest struct {
	Product   *string    `json:"product"`
	RequestID *string    `json:"requestId"`
	Group     *workGroup `json:"group"`
}

type workGroup struct {
	Kind    *string   `json:"kind"`
	Default *bool     `json:"default"`
	Balance *float64  `json:"balance"`
	Dates   *[]string `json:"dates"`
}

type workResponse struct {
	Product   string     `json:"product"`
	RequestID string     `json:"requestId"`
	Client    workClient `json:"client"`
}

type workClient struct {
	Balance float64 `json:"balance"`
	MinDate string  `json:"minDate"`
	MaxDate string  `json:"maxDate"`
}

var errInvalid = errors.New("invalid document")

// compute validates a /work document and builds the answer.
func compute(body []byte) (*workResponse, error) {
	var req workRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	g := req.Group
	if req.Product == nil || req.RequestID == nil || g == nil ||
		g.Kind == nil || g.Default == nil || g.Balance == nil || g.Dates == nil ||
		len(*g.Dates) == 0 {
		return nil, errInvalid
	}
	minDate, maxDate, err := dateRange(*g.Dates)
	if err != nil {
		return nil, err
	}
	return &workResponse{
		Product:   *req.Product,
		RequestID: *req.RequestID,
		Client: workClient{
			Balance: *g.Balance,
			MinDate: minDate,
			MaxDate: maxDate,
		},
	}, nil
}

// dateRange parses every date and writes the earliest and the latest in the
// contract's format; shared by POST /work and the gRPC Compute call, which
// follow the same rules.
func dateRange(dates []string) (minDate, maxDate string, err error) {
	if len(dates) == 0 {
		return "", "", errInvalid
	}
	var minT, maxT time.Time
	for i, s := range dates {
		t, err := parseDate(s)
		if err != nil {
			return "", "", err
		}
		if i == 0 || t.Before(minT) {
			minT = t
		}
		if i == 0 || t.After(maxT) {
			maxT = t
		}
	}
	return minT.UTC().Format(dateLayout), maxT.UTC().Format(dateLayout), nil
}

// parseDate parses a contract timestamp. time.Parse checks the ranges
// (month 13, day 30 of February, hour 24 and second 60 are errors); it would
// also take a comma before the milliseconds, which the contract does not allow.
// parseDate checks the exact shape first: time.Parse alone accepts more than
// the contract does (a sign in the fraction, as in "00.+01Z").
func parseDate(s string) (time.Time, error) {
	if len(s) != len(dateLayout) {
		return time.Time{}, errInvalid
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 4, 7:
			if s[i] != '-' {
				return time.Time{}, errInvalid
			}
		case 10:
			if s[i] != 'T' {
				return time.Time{}, errInvalid
			}
		case 13, 16:
			if s[i] != ':' {
				return time.Time{}, errInvalid
			}
		case 19:
			if s[i] != '.' {
				return time.Time{}, errInvalid
			}
		case 23:
			if s[i] != 'Z' {
				return time.Time{}, errInvalid
			}
		default:
			if s[i] < '0' || s[i] > '9' {
				return time.Time{}, errInvalid
			}
		}
	}
	return time.Parse(dateLayout, s)
}

func work(w http.ResponseWriter, r *http.Request) {
	// Every /work answer may be compressed or not by Accept-Encoding
	// (json-comp), the 400s as well as the 200s: caches must know.
	w.Header().Set("Vary", "Accept-Encoding")
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeText(w, http.StatusRequestEntityTooLarge, "body too large")
		} else {
			writeText(w, http.StatusBadRequest, "bad body")
		}
		return
	}
	resp, err := compute(body)
	if err != nil {
		writeText(w, http.StatusBadRequest, "bad request")
		return
	}
	out, err := json.Marshal(resp)
	if err != nil {
		writeText(w, http.StatusInternalServerError, "cannot encode answer")
		return
	}
	writeCompressible(w, r, "application/json", out)
}
