package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// Request is something only a person can answer: a USER_QUESTION, a DEPENDENCY_REQUEST or a
// phase approval. Fields are the block's fields as the spec names them.
type Request struct {
	RunID         string         `json:"runId"`
	AgentID       string         `json:"agentId"`
	InteractionID string         `json:"interactionId"`
	ID            string         `json:"id"`
	Kind          string         `json:"kind"` // question, dependency, phase_complete, error (recovery.go)
	Fields        map[string]any `json:"fields"`
	Deadline      time.Time      `json:"deadline,omitzero"`
	// Invalid says why the value last given for this dependency was refused (it failed the
	// type's validation): the request is asked again, and an answer from a file is not
	// given twice.
	Invalid string `json:"invalid,omitempty"`
	// offer checks a value given for a dependency request, wherever it comes from
	// (dependency.go): nil when it is to be delivered, else why it was refused; rejected
	// when that refusal was the last one allowed, so the request is rejected.
	offer func(value string) (refused error, rejected bool)
	// redact, when set, is the run's secrets: a request is written (state.json, listRuns)
	// with them redacted, though it is matched on what the agent printed.
	redact *secretSet
}

// MarshalJSON writes the request with the run's secrets redacted from its fields.
func (r Request) MarshalJSON() ([]byte, error) {
	type plain Request
	p := plain(r)
	if r.redact != nil {
		p.Fields = r.redact.fields(r.Fields)
		p.Invalid = r.redact.str(r.Invalid)
	}
	return json.Marshal(p)
}

// Field returns a field as text.
func (r Request) Field(name string) string {
	switch v := r.Fields[name].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// Options lists a question's options.
func (r Request) Options() []string {
	switch v := r.Fields["options"].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// Response answers a Request. Value holds an answer or a dependency's value (never logged).
type Response struct {
	Value  string `json:"value"`
	Reject bool   `json:"reject,omitempty"`
	Reason string `json:"reason,omitempty"`
	// offered: the value already passed Request.offer (the Inbox checks it as it is given).
	offered bool
}

// Human answers requests. Ask blocks until there is an answer or ctx ends. It calls ready
// (when not nil) once, as soon as the request can take an answer: the engine logs the
// request's event (question_asked…) there, so a client that answers the moment it hears of
// a request is never told there is no such request.
type Human interface {
	Ask(ctx context.Context, r Request, ready func()) (Response, error)
}

func call(f func()) {
	if f != nil {
		f()
	}
}

// ErrNoAnswer is returned by NonInteractive when a question has no default.
var ErrNoAnswer = errors.New("the question has no default and the run is non-interactive")

// NonInteractive answers without a person: a question takes its default (or fails), a
// dependency is rejected unless Answers has it, a phase is approved, an error that asks for a
// person (notify_user) stops the agent unless Answers has it.
type NonInteractive struct {
	// Answers by question id or question text (the --answers file).
	Answers map[string]string
}

func (n NonInteractive) Ask(_ context.Context, r Request, ready func()) (Response, error) {
	call(ready)
	if r.Invalid != "" {
		return Response{Reject: true, Reason: "the value supplied for " + firstNonEmpty(r.Field("name"), r.ID) + " was refused: " + r.Invalid}, nil
	}
	if v, ok := lookupAnswer(n.Answers, r); ok {
		return Response{Value: v}, nil
	}
	switch r.Kind {
	case "question":
		if d := r.Field("default"); d != "" {
			return Response{Value: d}, nil
		}
		return Response{}, fmt.Errorf("question %q from %s: %w (supply it with --answers)", r.Field("question"), r.AgentID, ErrNoAnswer)
	case "dependency":
		return Response{Reject: true, Reason: "non-interactive run: no value supplied for " + firstNonEmpty(r.Field("name"), r.ID)}, nil
	case "error":
		return Response{Value: runtime.RecoveryStop, Reason: "no one can choose in a non-interactive run"}, nil
	}
	return Response{Value: "approved"}, nil
}

func lookupAnswer(answers map[string]string, r Request) (string, bool) {
	for _, k := range []string{r.ID, r.Field("question"), r.Field("name"), r.Field("message")} {
		if k == "" {
			continue
		}
		if v, ok := answers[k]; ok {
			return v, true
		}
	}
	return "", false
}

// LoadAnswers reads an --answers file: a JSON object mapping question ids or question
// texts (or dependency names) to answers.
func LoadAnswers(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: an answers file is a JSON object {\"question id or text\": \"answer\"}: %w", path, err)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: the answer to %q must be a string", path, k)
		}
		out[k] = s
	}
	return out, nil
}

// Terminal asks at a prompt: the question and its options on W, the answer read from R.
// Answers are consulted first. Values of secret dependency types (api_key, env_variable,
// service) are read without echo when R is a terminal (readSecret); they are never printed
// back.
type Terminal struct {
	R       io.Reader
	W       io.Writer
	Answers map[string]string
	mu      sync.Mutex
	br      *bufio.Reader
}

func (t *Terminal) Ask(ctx context.Context, r Request, ready func()) (Response, error) {
	call(ready)
	if v, ok := lookupAnswer(t.Answers, r); ok && r.Invalid == "" {
		return Response{Value: v}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.br == nil {
		t.br = bufio.NewReader(t.R)
	}
	w := termsafe.Writer(t.W) // the question, its options and context are an agent's text
	switch r.Kind {
	case "question":
		fmt.Fprintf(w, "\n[%s] %s asks: %s\n", r.InteractionID, r.AgentID, r.Field("question"))
		if c := r.Field("context"); c != "" {
			fmt.Fprintf(w, "  context: %s\n", c)
		}
		opts := r.Options()
		for i, o := range opts {
			fmt.Fprintf(w, "  %d) %s\n", i+1, o)
		}
		def := r.Field("default")
		if def != "" {
			fmt.Fprintf(w, "answer [%s]: ", def)
		} else {
			fmt.Fprint(w, "answer: ")
		}
		line, err := t.readLine(ctx)
		if err != nil {
			if def != "" && errors.Is(err, io.EOF) {
				return Response{Value: def}, nil
			}
			return Response{}, err
		}
		if line == "" {
			if def == "" {
				return Response{}, fmt.Errorf("question %q: %w", r.Field("question"), ErrNoAnswer)
			}
			return Response{Value: def}, nil
		}
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(opts) {
			return Response{Value: opts[n-1]}, nil
		}
		return Response{Value: line}, nil
	case "dependency":
		fmt.Fprintf(w, "\n[%s] %s needs %s %q: %s\n", r.InteractionID, r.AgentID, r.Field("type"), r.Field("name"), r.Field("description"))
		if r.Invalid != "" {
			fmt.Fprintf(w, "  the value given was refused: %s\n", r.Invalid)
		}
		if runtime.SecretDependencyType(r.Field("type")) {
			// Echo goes off before the prompt shows: what is typed (or pasted) at once after
			// it never appears on the screen.
			if restore := t.echoOff(); restore != nil {
				defer func() { restore(); fmt.Fprintln(w) }()
			}
		}
		if r.Field("type") == "package" {
			fmt.Fprintf(w, "add %s to the project's manifest in the agent's sandbox? [y/N] (or another package's name): ", r.Field("name"))
		} else {
			fmt.Fprint(w, "value (empty to reject): ")
		}
		line, err := t.readLine(ctx)
		if strings.EqualFold(line, "n") || strings.EqualFold(line, "no") {
			line = ""
		}
		if err != nil || line == "" {
			return Response{Reject: true, Reason: "rejected at the terminal"}, nil
		}
		return Response{Value: line}, nil
	case "error":
		return t.askRecovery(ctx, r)
	default:
		fmt.Fprintln(w)
		switch v := r.Fields["verification"].(type) { // what the phase's verification found
		case map[string]any:
			fmt.Fprintf(w, "  verified by %v: passed", v["verifier"])
			if rep, ok := v["report"]; ok {
				fmt.Fprintf(w, " — report %v", rep)
			}
			fmt.Fprintln(w)
		case string:
			fmt.Fprintf(w, "  not verified: %s\n", v)
		}
		fmt.Fprintf(w, "[%s] %s completed phase %s. Continue? [Y/n]: ", r.InteractionID, r.AgentID, r.Field("N"))
		line, _ := t.readLine(ctx)
		if strings.EqualFold(line, "n") || strings.EqualFold(line, "no") {
			return Response{Reject: true, Reason: "phase not approved"}, nil
		}
		return Response{Value: "approved"}, nil
	}
}

// askRecovery asks what to do about an agent's [ERROR] (notify_user) until the answer is
// retry, skip or stop (a number too); no answer at all (end of input) stops the agent.
func (t *Terminal) askRecovery(ctx context.Context, r Request) (Response, error) {
	w := termsafe.Writer(t.W) // the error's message and details are an agent's text
	fmt.Fprintf(w, "\n[%s] %s\n", r.InteractionID, errorQuestion(r))
	for i, c := range runtime.RecoveryChoices {
		fmt.Fprintf(w, "  %d) %s\n", i+1, c)
	}
	for {
		fmt.Fprint(w, "retry, skip or stop: ")
		line, err := t.readLine(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return Response{}, err
			}
			return Response{Value: runtime.RecoveryStop, Reason: "no answer came (end of input)"}, nil
		}
		if c, ok := recoveryChoice(line); ok {
			resp := Response{Value: c}
			if c == runtime.RecoveryStop {
				resp.Reason = "you chose to stop"
			}
			return resp, nil
		}
		fmt.Fprintf(w, "  %q is not one of them\n", line)
	}
}

func (t *Terminal) readLine(ctx context.Context) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := t.br.ReadString('\n')
		if err != nil && s != "" {
			err = nil
		}
		ch <- res{strings.TrimSpace(s), err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Inbox is the Human of the server: a request is published (via Notify) and waits until
// Answer names it. Pending requests can be listed again after a window reload.
type Inbox struct {
	Notify  func(Request)
	mu      sync.Mutex
	waiting map[string]chan Response
	reqs    map[string]Request
}

func inboxKey(runID, id string) string { return runID + "\x00" + id }

func (b *Inbox) Ask(ctx context.Context, r Request, ready func()) (Response, error) {
	ch := make(chan Response, 1)
	b.mu.Lock()
	if b.waiting == nil {
		b.waiting, b.reqs = map[string]chan Response{}, map[string]Request{}
	}
	k := inboxKey(r.RunID, r.ID)
	b.waiting[k], b.reqs[k] = ch, r
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiting, k)
		delete(b.reqs, k)
		b.mu.Unlock()
	}()
	call(ready) // registered: Answer takes it from here on
	if b.Notify != nil {
		b.Notify(r)
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
}

// Answer resolves a pending request; it fails when there is none with that id, and for a
// dependency's value the engine refuses (the request then stays pending, or is rejected
// after the last refusal allowed: the error says which).
func (b *Inbox) Answer(runID, id string, resp Response) (err error) {
	b.mu.Lock()
	ch, ok := b.waiting[inboxKey(runID, id)]
	r := b.reqs[inboxKey(runID, id)]
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("run %s has no pending request %q", runID, id)
	}
	if _, ok := recoveryChoice(resp.Value); r.Kind == "error" && !ok {
		return fmt.Errorf("%s: answer retry, skip or stop, not %q; the request is still pending", id, resp.Value)
	}
	// A dependency's value is checked by the engine's one check (Request.offer) here, in the
	// caller's goroutine: a refused one is refused to whoever gave it, and the request stays
	// pending, until the last refusal allowed rejects it.
	if r.Kind == "dependency" && !resp.Reject && r.offer != nil {
		refused, rejected := r.offer(resp.Value)
		if refused != nil && !rejected {
			return refused
		}
		if rejected {
			resp = Response{Reject: true, Reason: refused.Error()}
			defer func() { err = refused }()
		}
		resp.offered = true
	}
	select {
	case ch <- resp:
		return nil
	default:
		return fmt.Errorf("request %q was already answered", id)
	}
}

// Pending lists the requests waiting for a person.
func (b *Inbox) Pending() []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Request, 0, len(b.reqs))
	for _, r := range b.reqs {
		out = append(out, r)
	}
	return out
}

// echoOff turns the terminal's echo off when R is a terminal, and returns what turns it back
// on (nil when R is not a terminal, or echo could not be turned off). A line typed meanwhile
// is read as usual (line editing works), and never shown.
func (t *Terminal) echoOff() (restore func()) {
	f, ok := t.R.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return noEcho(int(f.Fd()))
}
