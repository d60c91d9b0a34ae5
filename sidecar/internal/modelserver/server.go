package modelserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// API is a provider's wire format.
type API string

const (
	MessagesAPI  API = "anthropic-messages" // Anthropic Messages API (Claude Code)
	ResponsesAPI API = "openai-responses"   // OpenAI Responses API (Codex)
	GeminiAPI    API = "gemini"             // Gemini API (Gemini CLI)
)

// Request is one request the server answered (or refused), for a test to inspect.
type Request struct {
	Method, Path string
	// Header is the request's headers (the credentials a gateway sent, say).
	Header http.Header
	Body   []byte
	// Conversation is the index of the Script conversation that answered, -1 for none;
	// Turn the number of model turns the request already held.
	Conversation int
	Turn         int
	// Cwd is the working folder the CLI told the model about ("" if none).
	Cwd string
	// Error says why the request was refused ("" when it was answered).
	Error string
}

// Server is a scripted model on 127.0.0.1.
type Server struct {
	// URL is the base URL (http://127.0.0.1:PORT), without the API's path.
	URL    string
	API    API
	script Script
	t      testing.TB
	srv    *httptest.Server

	mu       sync.Mutex
	requests []Request
	failed   map[[2]int]int // {conversation, turn} → errors served
}

// Start serves script in the api's wire format until the test ends. A request the script
// cannot answer is refused with an HTTP 400 in the API's error format (which the CLIs do not
// retry) and fails the test.
func Start(t testing.TB, api API, script Script) *Server {
	t.Helper()
	s := &Server{API: api, script: script, t: t}
	// httptest listens on 127.0.0.1 with an OS-chosen port.
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Config.ErrorLog = nil
	s.srv.Start()
	s.URL = s.srv.URL
	if host, _, err := net.SplitHostPort(s.srv.Listener.Addr().String()); err != nil || host != "127.0.0.1" {
		t.Fatalf("modelserver: listening on %s, want 127.0.0.1", s.srv.Listener.Addr())
	}
	t.Cleanup(s.srv.Close)
	return s
}

// Requests returns the requests so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Answered counts the requests answered from the script (model turns served).
func (s *Server) Answered() int {
	n := 0
	for _, r := range s.Requests() {
		if r.Error == "" && r.Conversation >= 0 {
			n++
		}
	}
	return n
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Conversation: -1}
	defer func() { s.record(rec) }()
	var h handler
	switch s.API {
	case MessagesAPI:
		h = anthropicHandler{}
	case ResponsesAPI:
		h = openaiHandler{}
	case GeminiAPI:
		h = geminiHandler{}
	}
	d, aux, err := h.read(r, body)
	if err != nil {
		rec.Error = err.Error()
		s.refuse(w, h, rec.Error)
		return
	}
	if aux != nil { // a request that is not a model turn (token counting, model lists…)
		writeJSON(w, aux)
		return
	}
	rec.Cwd = d.cwd()
	reply, conv, why := s.script.pick(d)
	rec.Conversation, rec.Turn = conv, d.turns
	if why != "" {
		rec.Error = why
		s.refuse(w, h, why)
		return
	}
	for _, c := range reply.Calls {
		if rec.Cwd == "" && (containsCwd(c.Args) || strings.Contains(c.Input, "{{cwd}}")) {
			rec.Error = "a call uses {{cwd}} but the request names no working folder"
			s.refuse(w, h, rec.Error)
			return
		}
	}
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	if e := reply.Error; e != nil && s.shouldFail(conv, d.turns, reply.FailTimes) {
		rec.Error = fmt.Sprintf("scripted error %d: %s", e.Status, e.Message)
		if e.RetryAfter != "" {
			w.Header().Set("Retry-After", e.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.Status)
		_ = json.NewEncoder(w).Encode(h.errorBody(e.Status, e.Message))
		return
	}
	h.reply(w, d, reply, rec.Cwd, d.turns)
}

// shouldFail counts a scripted error for {conv, turn}: true while fewer than times (0: no
// limit) have been served.
func (s *Server) shouldFail(conv, turn, times int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = map[[2]int]int{}
	}
	k := [2]int{conv, turn}
	if times > 0 && s.failed[k] >= times {
		return false
	}
	s.failed[k]++
	return true
}

func containsCwd(args map[string]any) bool {
	b, _ := json.Marshal(args)
	return strings.Contains(string(b), "{{cwd}}")
}

func (s *Server) refuse(w http.ResponseWriter, h handler, msg string) {
	s.t.Errorf("modelserver (%s): %s", s.API, msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(h.errorBody(http.StatusBadRequest, "modelserver: "+msg))
}

// handler is one API's wire format.
type handler interface {
	// read parses a request. A request that is no model turn gets aux, the JSON to answer.
	read(r *http.Request, body []byte) (d *dialogue, aux any, err error)
	// reply streams reply as the response to a model turn.
	reply(w http.ResponseWriter, d *dialogue, reply Reply, cwd string, turn int)
	errorBody(status int, msg string) any
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes Server-Sent Events and flushes each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; name "" writes a data-only event.
func (e *sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err) // our own values
	}
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if e.f != nil {
		e.f.Flush()
	}
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func itoa(n int) string { return strconv.Itoa(n) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
