package server

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"

	"go.lsp.dev/protocol"
)

// window/logMessage types.
const (
	msgError   = protocol.MessageTypeError
	msgWarning = protocol.MessageTypeWarning
	msgInfo    = protocol.MessageTypeInfo
	msgLog     = protocol.MessageTypeLog
)

// logMessage reports the sidecar's own problems to the client's output channel (and stderr).
func (s *Server) logMessage(typ protocol.MessageType, message string) {
	s.logf("%s", message)
	s.notify("window/logMessage", &protocol.LogMessageParams{Type: typ, Message: message})
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
	token protocol.ProgressToken
}

func (s *Server) beginProgress(ctx context.Context, workDoneToken any, title, message string) *progress {
	p := &progress{s: s}
	if workDoneToken != nil {
		tok, ok := progressToken(workDoneToken)
		if !ok {
			s.logMessage(msgWarning, fmt.Sprintf("%s: workDoneToken %v is neither a string nor a 32-bit integer (LSP's ProgressToken); no progress is reported", title, workDoneToken))
			return p
		}
		p.token = tok
	} else {
		s.mu.Lock()
		can := s.progressCap
		s.mu.Unlock()
		if !can {
			return p
		}
		tok := protocol.String(fmt.Sprintf("agentcanvas-%d", s.seq.Add(1)))
		if _, err := s.conn.Call(ctx, "window/workDoneProgress/create", &protocol.WorkDoneProgressCreateParams{Token: tok}, nil); err != nil {
			s.logf("window/workDoneProgress/create: %v", err)
			return p
		}
		p.token = tok
	}
	p.send(&protocol.WorkDoneProgressBegin{Kind: "begin", Title: title, Message: &message, Cancellable: ptr(true), Percentage: ptr(uint32(0))})
	return p
}

// progressToken is a workDoneToken that encoding/json decoded (a string or a float64) as
// LSP's ProgressToken.
func progressToken(v any) (protocol.ProgressToken, bool) {
	switch v := v.(type) {
	case string:
		return protocol.String(v), true
	case float64:
		if v == math.Trunc(v) && v >= math.MinInt32 && v <= math.MaxInt32 {
			return protocol.Integer(int32(v)), true
		}
	}
	return nil, false
}

func (p *progress) report(message string, percentage int) {
	if p == nil || p.token == nil {
		return
	}
	p.send(&protocol.WorkDoneProgressReport{Kind: "report", Message: &message, Percentage: ptr(uint32(max(percentage, 0)))})
}

func (p *progress) end(message string) {
	if p == nil || p.token == nil {
		return
	}
	p.send(&protocol.WorkDoneProgressEnd{Kind: "end", Message: &message})
}

// send sends one $/progress value (a WorkDoneProgressBegin, Report or End).
func (p *progress) send(value any) {
	raw, err := protocol.Marshal(value)
	if err != nil {
		p.s.logf("$/progress: %v", err)
		return
	}
	p.s.notify("$/progress", &protocol.ProgressParams{Token: p.token, Value: raw})
}
