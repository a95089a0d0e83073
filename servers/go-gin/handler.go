package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
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

func init() {
	// Release mode: no debug output (route listing, warnings) on stderr.
	gin.SetMode(gin.ReleaseMode)
}

// newHandler returns the routes of the contract on a gin engine: gin.New()
// with the Recovery middleware and without Logger, so that no request is
// logged.
func newHandler(root rootMode) *gin.Engine {
	r := gin.New()
	r.Use(gin.Recovery())
	// The contract answers 404 for any other path; gin's default would
	// answer "/echo" and "/blank/" with a redirect (301) to "/echo/" and
	// "/blank". This only changes what an unmatched path gets.
	r.RedirectTrailingSlash = false

	r.GET("/blank", blank)
	r.POST("/work", work)
	r.GET("/echo/*text", echo)
	switch root {
	case rootBlank:
		r.GET("/", blank)
	case rootWork:
		r.POST("/", work)
	}
	r.NoRoute(func(c *gin.Context) {
		c.String(http.StatusNotFound, "not found")
	})
	return r
}

func blank(c *gin.Context) {
	c.String(http.StatusOK, "OK")
}

func echo(c *gin.Context) {
	// The catch-all parameter keeps its leading slash: "/abc" for "/echo/abc".
	text := strings.TrimPrefix(c.Param("text"), "/")
	c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(text))
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

// work answers POST /work. The body is read whole and parsed with
// json.Unmarshal rather than c.ShouldBindJSON: gin's binding decodes with a
// json.Decoder, which stops after the first value and so would take a
// document followed by garbage; the contract answers that with 400.
func work(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxBodyBytes)
	body, err := c.GetRawData()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			c.String(http.StatusRequestEntityTooLarge, "body too large")
		} else {
			c.String(http.StatusBadRequest, "bad body")
		}
		return
	}
	resp, err := compute(body)
	if err != nil {
		c.String(http.StatusBadRequest, "bad request")
		return
	}
	// application/json; charset=utf-8, encoded with encoding/json.
	c.JSON(http.StatusOK, resp)
}
