// app.go owns contract 1.4's app part: the in-memory session store, the
// GET /app page rendered by html/template and POST /app/logout.
package main

import (
	"bytes"
	"crypto/rand"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// sessionCookie names the session; its value is the session's id.
const sessionCookie = "sid"

// sessionIdle is how long a session may go without a request before the
// sweep may drop it (the contract's floor).
const sessionIdle = 10 * time.Minute

// sweepEvery spaces the sweeps: one walk of the map a minute at most, made by
// the request that creates a session, so no goroutine outlives a handler.
const sweepEvery = time.Minute

// maxPage is the highest K of GET /app?page=K.
const maxPage = 100000

// appLabels are the item texts, chosen by the contract to need escaping.
var appLabels = [5]string{
	`Tom & Jerry's cheese board`,
	`<b>bold</b> move of the week`,
	`"Quoted" goods, boxed`,
	`O'Brien's pick for winter`,
	`a < b > c, the ordered set`,
}

//go:embed templates/app.html
var appTemplateText string

var appTemplate = template.Must(template.New("app").Parse(appTemplateText))

// cents is an amount written as the contract writes money, by integer
// arithmetic only: 5 is "0.05". html/template prints it through String.
type cents int

func (c cents) String() string {
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}

type appItem struct {
	Number   int
	Label    string
	Row      int
	Quantity int
	Price    cents
	Total    cents
}

type appPage struct {
	Page   int
	Visits int64
	Since  int64
	Items  []appItem
	CSS    template.CSS
	JS     template.JS
}

// appItems are page k's 50 rows, from the contract's formula.
func appItems(k int) []appItem {
	items := make([]appItem, 50)
	for i := 1; i <= 50; i++ {
		q := (k*7+i*13)%100 + 1
		c := (k*7919 + i*104729) % 100000
		items[i-1] = appItem{
			Number:   (k-1)*50 + i,
			Label:    appLabels[(k+i)%5],
			Row:      i,
			Quantity: q,
			Price:    cents(c),
			Total:    cents(q * c),
		}
	}
	return items
}

// session is one browser's state. mu is held from reading visits to the end
// of the render, so two requests on one session never see the same count.
type session struct {
	id       string
	since    int64 // creation, milliseconds since the Unix epoch
	lastUsed atomic.Int64
	mu       sync.Mutex
	visits   int64
}

// sessionStore is a map from id to session under one lock, held only to find,
// add or remove an entry (net/http has no session store of its own).
type sessionStore struct {
	mu        sync.Mutex
	byID      map[string]*session
	lastSweep time.Time
}

func newSessionStore() *sessionStore {
	return &sessionStore{byID: make(map[string]*session)}
}

// get returns the live session named sent, or a new one (created true) whose
// id is fresh: crypto/rand's Text, 26 base32 characters (130 bits), never
// the id the client sent.
func (s *sessionStore) get(sent string, now time.Time) (sess *session, created bool) {
	if sent != "" {
		s.mu.Lock()
		sess = s.byID[sent]
		s.mu.Unlock()
		if sess != nil {
			sess.lastUsed.Store(now.UnixMilli())
			return sess, false
		}
	}
	sess = &session{since: now.UnixMilli()}
	sess.lastUsed.Store(now.UnixMilli())
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastSweep) >= sweepEvery {
		s.sweep(now)
	}
	for {
		id := rand.Text()
		if _, taken := s.byID[id]; !taken && id != sent {
			sess.id = id
			s.byID[id] = sess
			return sess, true
		}
	}
}

// sweep drops the sessions idle for sessionIdle or longer; s.mu is held.
func (s *sessionStore) sweep(now time.Time) {
	s.lastSweep = now
	oldest := now.Add(-sessionIdle).UnixMilli()
	for id, sess := range s.byID {
		if sess.lastUsed.Load() <= oldest {
			delete(s.byID, id)
		}
	}
}

func (s *sessionStore) remove(id string) {
	s.mu.Lock()
	delete(s.byID, id)
	s.mu.Unlock()
}

// appHandlers serve /app. css and js are empty when the contract's files
// could not be read: /app then answers 503 rather than a page without them.
type appHandlers struct {
	css      template.CSS
	js       template.JS
	sessions *sessionStore
}

// loadApp reads contract/app's stylesheet and script (the server runs in its
// own folder: ../../contract/app, or APP_DIR). On an error the handlers still
// serve, with 503.
func loadApp(dir string) (*appHandlers, error) {
	a := &appHandlers{sessions: newSessionStore()}
	css, err := os.ReadFile(filepath.Join(dir, "app.css"))
	if err != nil {
		return a, err
	}
	js, err := os.ReadFile(filepath.Join(dir, "app.js"))
	if err != nil {
		return a, err
	}
	a.css, a.js = template.CSS(css), template.JS(js)
	return a, nil
}

// pageNumber is K from ?page=K: decimal digits only (Atoi alone would take a
// sign), 1 to maxPage; digits past int's range are an Atoi error.
func pageNumber(r *http.Request) (int, bool) {
	v := r.URL.Query().Get("page")
	if v == "" {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
	}
	k, err := strconv.Atoi(v)
	return k, err == nil && k >= 1 && k <= maxPage
}

// page serves GET /app?page=K.
func (a *appHandlers) page(w http.ResponseWriter, r *http.Request) {
	if a.css == "" {
		writeText(w, http.StatusServiceUnavailable, "no contract/app files (APP_DIR)")
		return
	}
	// Checked before the session is touched: a 400 leaves it as it was.
	k, ok := pageNumber(r)
	if !ok {
		writeText(w, http.StatusBadRequest, "page must be an integer from 1 to 100000")
		return
	}
	sent := ""
	if c, err := r.Cookie(sessionCookie); err == nil {
		sent = c.Value
	}
	sess, created := a.sessions.get(sent, time.Now())
	if created {
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sess.id, Path: "/", HttpOnly: true})
	}
	data := appPage{Page: k, Since: sess.since, Items: appItems(k), CSS: a.css, JS: a.js}
	var out bytes.Buffer
	out.Grow(12 << 10)
	sess.mu.Lock()
	sess.visits++
	data.Visits = sess.visits
	err := appTemplate.Execute(&out, data)
	sess.mu.Unlock()
	if err != nil {
		writeText(w, http.StatusInternalServerError, "cannot render the page")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeCompressible(w, r, "text/html; charset=utf-8", out.Bytes())
}

// logout serves POST /app/logout: the session named by the cookie ends; 200
// whether or not there was one.
func (a *appHandlers) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		a.sessions.remove(c.Value)
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, MaxAge: -1})
	}
	writeText(w, http.StatusOK, "logged out")
}
