package server

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// window/logMessage types.
const (
	msgError   = 1
	msgWarning = 2
	msgInfo    = 3
	msgLog     = 4
)

// logMessage reports the sidecar's own problems to the client's output channel (and stderr).
func (s *Server) logMessage(typ int, message string) {
	s.logf("%s", message)
	s.notify("window/logMessage", map[string]any{"type": typ, "message": message})
}

// Health of the sidecar in agentcanvas/status.
const (
	healthOK      = "ok"
	healthWarning = "warning"
	healthError   = "error"
)

// statusParams is agentcanvas/status.
type statusParams struct {
	Health       string   `json:"health"`
	Message      string   `json:"message"`
	RunningFlows []string `json:"runningFlows"`
	Version      string   `json:"version"`
}

// statusTracker keeps the last health and message; publish sends it when it changed.
type statusTracker struct {
	mu       sync.Mutex
	health   string
	message  string
	running  map[string]int
	lastSent string
}

func (t *statusTracker) set(s *Server, health, message string) {
	t.mu.Lock()
	t.health, t.message = health, message
	t.mu.Unlock()
	t.publish(s)
}

// clear returns to ok if the current message is message.
func (t *statusTracker) clear(s *Server, message string) {
	t.mu.Lock()
	match := t.message == message
	if match {
		t.health, t.message = "", ""
	}
	t.mu.Unlock()
	if match {
		t.publish(s)
	}
}

// runChanged keeps the running-flows list for status.
func (t *statusTracker) runChanged(s *Server, flow string, delta int) {
	t.mu.Lock()
	if t.running == nil {
		t.running = map[string]int{}
	}
	t.running[flow] += delta
	if t.running[flow] <= 0 {
		delete(t.running, flow)
	}
	t.mu.Unlock()
	t.publish(s)
}

func (t *statusTracker) snapshot(s *Server) statusParams {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := statusParams{Health: t.health, Message: t.message, RunningFlows: []string{}, Version: s.opts.Version}
	if p.Health == "" {
		p.Health, p.Message = healthOK, "ready"
	}
	for f := range t.running {
		p.RunningFlows = append(p.RunningFlows, f)
	}
	sort.Strings(p.RunningFlows)
	return p
}

func (t *statusTracker) publish(s *Server) {
	p := t.snapshot(s)
	key := fmt.Sprint(p)
	t.mu.Lock()
	if key == t.lastSent {
		t.mu.Unlock()
		return
	}
	t.lastSent = key
	t.mu.Unlock()
	s.notify("agentcanvas/status", p)
}

// progress reports long work with $/progress. It uses the request's workDoneToken when the
// client gave one, else creates a token with window/workDoneProgress/create when the client
// supports it, else reports nothing. The caller must be an async method (the create call
// waits for the client's answer).
type progress struct {
	s     *Server
	token any
}

func (s *Server) beginProgress(ctx context.Context, workDoneToken any, title, message string) *progress {
	p := &progress{s: s, token: workDoneToken}
	if p.token == nil {
		s.mu.Lock()
		can := s.progressCap
		s.mu.Unlock()
		if !can {
			return p
		}
		tok := fmt.Sprintf("agentcanvas-%d", s.seq.Add(1))
		if _, err := s.conn.Call(ctx, "window/workDoneProgress/create", map[string]any{"token": tok}, nil); err != nil {
			s.logf("window/workDoneProgress/create: %v", err)
			return p
		}
		p.token = tok
	}
	s.notify("$/progress", map[string]any{"token": p.token, "value": map[string]any{
		"kind": "begin", "title": title, "message": message, "cancellable": true, "percentage": 0,
	}})
	return p
}

func (p *progress) report(message string, percentage int) {
	if p == nil || p.token == nil {
		return
	}
	p.s.notify("$/progress", map[string]any{"token": p.token, "value": map[string]any{
		"kind": "report", "message": message, "percentage": percentage,
	}})
}

func (p *progress) end(message string) {
	if p == nil || p.token == nil {
		return
	}
	p.s.notify("$/progress", map[string]any{"token": p.token, "value": map[string]any{
		"kind": "end", "message": message,
	}})
}
