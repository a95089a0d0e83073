package main

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/valyala/fasthttp"
)

// rootMode says what "/" answers (the optional first argument).
type rootMode int

const (
	rootNone  rootMode = iota // "/" is an unknown path: 404
	rootBlank                 // argument "0": "/" answers as /blank
	rootWork                  // argument "1": "/" answers as /work
)

// dateLayout is the contract's timestamp format, YYYY-MM-DDTHH:MM:SS.sssZ:
// always three digits of milliseconds and a literal Z (UTC).
const dateLayout = "2006-01-02T15:04:05.000Z"

const echoPrefix = "/echo/"

// newHandler returns the routes of the contract. fasthttp has no router of
// its own: a switch on the path is how its users route a handful of paths.
// ctx.Path() is the path without the query string.
func newHandler(root rootMode) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := ctx.Path()
		switch {
		case string(path) == "/blank":
			only(ctx, fasthttp.MethodGet, blank)
		case string(path) == "/work":
			only(ctx, fasthttp.MethodPost, work)
		case len(path) >= len(echoPrefix) && string(path[:len(echoPrefix)]) == echoPrefix:
			only(ctx, fasthttp.MethodGet, echo)
		case string(path) == "/" && root == rootBlank:
			only(ctx, fasthttp.MethodGet, blank)
		case string(path) == "/" && root == rootWork:
			only(ctx, fasthttp.MethodPost, work)
		default:
			writeText(ctx, fasthttp.StatusNotFound, "not found")
		}
	}
}

// only runs h for the method it serves and answers 405 for any other.
func only(ctx *fasthttp.RequestCtx, method string, h fasthttp.RequestHandler) {
	if string(ctx.Method()) != method {
		ctx.Response.Header.Set(fasthttp.HeaderAllow, method)
		writeText(ctx, fasthttp.StatusMethodNotAllowed, "method not allowed")
		return
	}
	h(ctx)
}

// writeText answers with a text/plain body; fasthttp frames it with
// Content-Length and adds the Date header (its cached, once-a-second date).
func writeText(ctx *fasthttp.RequestCtx, status int, body string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/plain")
	ctx.SetBodyString(body)
}

func blank(ctx *fasthttp.RequestCtx) {
	writeText(ctx, fasthttp.StatusOK, "OK")
}

func echo(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("text/plain")
	// SetBody copies: the path buffer belongs to the request.
	ctx.SetBody(ctx.Path()[len(echoPrefix):])
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
	var minT, maxT time.Time
	for i, s := range *g.Dates {
		t, err := parseDate(s)
		if err != nil {
			return nil, err
		}
		if i == 0 || t.Before(minT) {
			minT = t
		}
		if i == 0 || t.After(maxT) {
			maxT = t
		}
	}
	return &workResponse{
		Product:   *req.Product,
		RequestID: *req.RequestID,
		Client: workClient{
			Balance: *g.Balance,
			MinDate: minT.UTC().Format(dateLayout),
			MaxDate: maxT.UTC().Format(dateLayout),
		},
	}, nil
}

// dateShape is the contract's timestamp, character by character: 'd' is a
// digit, anything else stands for itself.
const dateShape = "dddd-dd-ddTdd:dd:dd.dddZ"

// parseDate parses a contract timestamp. The shape is checked here first:
// time.Parse alone would take a comma before the milliseconds and a sign in
// them (".+01" reads as 1 ms). time.Parse then checks the ranges (month 13,
// 30 February, hour 24 and second 60 are errors).
func parseDate(s string) (time.Time, error) {
	if len(s) != len(dateShape) {
		return time.Time{}, errInvalid
	}
	for i := 0; i < len(s); i++ {
		if want := dateShape[i]; want == 'd' {
			if s[i] < '0' || s[i] > '9' {
				return time.Time{}, errInvalid
			}
		} else if s[i] != want {
			return time.Time{}, errInvalid
		}
	}
	return time.Parse(dateLayout, s)
}

// work answers POST /work. fasthttp has already read the whole body
// (Content-Length or chunked) before calling the handler, and answers 413
// itself for a body over its default limit (4 MiB).
func work(ctx *fasthttp.RequestCtx) {
	resp, err := compute(ctx.PostBody())
	if err != nil {
		writeText(ctx, fasthttp.StatusBadRequest, "bad request")
		return
	}
	out, err := json.Marshal(resp)
	if err != nil {
		writeText(ctx, fasthttp.StatusInternalServerError, "cannot encode answer")
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBody(out)
}
