package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// In-process tests with fake domain services: the plumbing between the wire and the
// service interfaces (workspace injection, progress, cancellation, run events, status).

type fakeProposals struct {
	mu      sync.Mutex
	calls   []string
	started chan struct{}
}

func (f *fakeProposals) rec(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *fakeProposals) Create(ctx context.Context, p CreateProposalParams) (any, error) {
	f.rec("create " + p.Workspace + " " + p.RunID + "/" + p.AgentID)
	return map[string]any{"runId": p.RunID, "agentId": p.AgentID, "files": []any{}}, nil
}
func (f *fakeProposals) List(ctx context.Context, p ListProposalsParams) (any, error) {
	return []any{map[string]any{"runId": "r1", "agentId": "a1", "status": "pending"}}, nil
}
func (f *fakeProposals) Get(ctx context.Context, p ProposalRef) (any, error) {
	return map[string]any{"files": []any{map[string]any{"path": "src/a.ts", "hunks": []any{map[string]any{"index": 0}}}}}, nil
}

// Apply blocks until cancelled: the cancellation test's slow request.
func (f *fakeProposals) Apply(ctx context.Context, p ApplyProposalParams) (any, error) {
	f.rec(fmt.Sprintf("apply %v %v", p.Files, len(p.Hunks)))
	if p.Check {
		return map[string]any{"ok": true}, nil
	}
	close(f.started)
	<-ctx.Done()
	return nil, ctx.Err()
}
func (f *fakeProposals) Reject(ctx context.Context, p RejectProposalParams) (any, error) {
	return nil, fmt.Errorf("proposal %s/%s was already applied", p.RunID, p.AgentID)
}

type fakeEngine struct{ sink RunEventSink }

func (e *fakeEngine) Start(ctx context.Context, f *flow.Flow, p StartRunParams) (any, error) {
	e.sink(eventlog.Event{Flow: f.Name, RunID: "r1", Event: "run_started"})
	e.sink(eventlog.Event{Flow: f.Name, RunID: "r1", Event: "message", Fields: map[string]any{"agent": "a1", "text": "hi"}})
	return map[string]any{"runId": "r1", "flow": f.Name, "status": "running", "env": len(p.Env)}, nil
}
func (e *fakeEngine) Stop(ctx context.Context, id string) error {
	e.sink(eventlog.Event{Flow: "team", RunID: id, Event: "run_finished", Fields: map[string]any{"status": "stopped"}})
	return nil
}
func (e *fakeEngine) StartSkill(ctx context.Context, p StartRunParams) (any, error) {
	return map[string]any{"runId": "r2", "flow": "skill-" + p.Skill.Name, "status": "running"}, nil
}
func (e *fakeEngine) StartRevision(ctx context.Context, req engine.RevisionRequest, p engine.StartParams) (any, error) {
	return map[string]any{"runId": "r3", "status": "running"}, nil
}
func (e *fakeEngine) List(ctx context.Context) (any, error)                 { return []any{}, nil }
func (e *fakeEngine) Answer(ctx context.Context, p AnswerParams) error      { return nil }
func (e *fakeEngine) Provide(ctx context.Context, p DependencyParams) error { return nil }
func (e *fakeEngine) Reject(ctx context.Context, p DependencyParams) error  { return nil }
func (e *fakeEngine) Close()                                                {}

func TestServicesPlumbing(t *testing.T) {
	root, uri := workspace(t, "team.yaml", goodFlow)
	fp := &fakeProposals{started: make(chan struct{})}
	c, _ := startInProcess(t, Options{Services: Services{
		Proposals: fp,
		NewRunEngine: func(ws string, sink RunEventSink, _ func() engine.Limits) (RunEngine, error) {
			if ws != root {
				t.Errorf("run engine workspace %q, want %q", ws, root)
			}
			return &fakeEngine{sink: sink}, nil
		},
		EditFlow: func(src []byte, file string, ops []flow.Op) ([]span.TextEdit, error) {
			// Replace the first "a1" after "id: " with "lead": a real edit through the mapper.
			i := strings.Index(string(src), "id: a1") + len("id: ")
			x := span.NewIndex(src)
			return []span.TextEdit{{Range: x.Range(i, i+2), NewText: "lead"}}, nil
		},
	}})
	c.initialize(root)
	c.waitNote("agentcanvas/status", nil)

	var created map[string]any
	c.mustCall("agentcanvas/createProposal", map[string]any{"runId": "r1", "agentId": "a1"}, &created)
	if created["runId"] != "r1" {
		t.Errorf("createProposal result %v", created)
	}
	// Progress: the server asked for a token, then sent begin and end.
	c.mu.Lock()
	var token json.RawMessage
	for _, m := range c.serverCalls {
		if m.Method == "window/workDoneProgress/create" {
			var p struct{ Token json.RawMessage }
			_ = json.Unmarshal(m.Params, &p)
			token = p.Token
		}
	}
	c.mu.Unlock()
	if token == nil {
		t.Fatal("no window/workDoneProgress/create before a long request")
	}
	for _, kind := range []string{"begin", "end"} {
		c.waitNote("$/progress", func(p json.RawMessage) bool {
			var pr struct {
				Token json.RawMessage
				Value struct{ Kind string }
			}
			_ = json.Unmarshal(p, &pr)
			return string(pr.Token) == string(token) && pr.Value.Kind == kind
		})
	}
	// A client-provided workDoneToken is used as is.
	c.mustCall("agentcanvas/applyProposal", map[string]any{"runId": "r1", "agentId": "a1", "check": true, "files": []string{"src/a.ts"}, "workDoneToken": "mine"}, nil)
	c.waitNote("$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"token":"mine"`) })

	// Cancelling a real long request (apply) with a string id.
	ch := c.send("apply-1", "agentcanvas/applyProposal", map[string]any{"runId": "r1", "agentId": "a1", "hunks": []any{map[string]any{"file": "src/a.ts", "index": 0}}})
	<-fp.started
	c.notify("$/cancelRequest", map[string]any{"id": "apply-1"})
	if m := c.await(ch, "cancelled apply"); m.Error == nil || m.Error.Code != int(CodeRequestCancelled) {
		t.Errorf("cancelled apply: %+v", m.Error)
	}
	// A domain refusal is a request-failed error carrying the domain's message.
	if _, err := c.call("agentcanvas/rejectProposal", map[string]any{"runId": "r1", "agentId": "a1"}); err == nil || err.Code != int(CodeRequestFailed) || !strings.Contains(err.Message, "already applied") {
		t.Errorf("rejectProposal: %v", err)
	}
	var got map[string]any
	c.mustCall("agentcanvas/getProposal", map[string]any{"runId": "r1", "agentId": "a1"}, &got)
	if _, ok := got["files"]; !ok {
		t.Errorf("getProposal: %v", got)
	}
	fp.mu.Lock()
	if len(fp.calls) == 0 || fp.calls[0] != "create "+root+" r1/a1" {
		t.Errorf("the proposal service was called with %v, want the workspace root injected", fp.calls)
	}
	fp.mu.Unlock()

	// Runs: events are forwarded, and status lists the running flow.
	var info map[string]any
	c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri, "dryRun": true, "env": map[string]string{"OPENAI_API_KEY": "sk-secret"}}, &info)
	if info["runId"] != "r1" || info["env"] != float64(1) {
		t.Errorf("startRun: %v", info)
	}
	c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool { return strings.Contains(string(p), `"event":"message"`) })
	c.waitNote("agentcanvas/status", func(p json.RawMessage) bool { return strings.Contains(string(p), `"runningFlows":["team"]`) })
	c.mustCall("agentcanvas/stopRun", map[string]any{"runId": "r1"}, nil)
	c.waitNote("agentcanvas/status", func(p json.RawMessage) bool { return strings.Contains(string(p), `"runningFlows":[]`) })
	var runs []any
	c.mustCall("agentcanvas/listRuns", nil, &runs)

	// editFlow: edits against the open version, in UTF-16 positions; stale versions refused.
	c.open(uri, goodFlow, 4)
	var ef editFlowResult
	c.mustCall("agentcanvas/editFlow", map[string]any{"uri": uri, "version": 4, "ops": []any{map[string]any{"op": "rename", "id": "a1", "newId": "lead"}}}, &ef)
	if ef.Version == nil || *ef.Version != 4 || len(ef.Edits) != 1 || ef.Edits[0].Range.Start.Line != 3 || ef.Edits[0].Range.Start.Character != 8 {
		t.Errorf("editFlow: %+v", ef)
	}
	if _, err := c.call("agentcanvas/editFlow", map[string]any{"uri": uri, "version": 3, "ops": []any{}}); err == nil || err.Code != int(CodeContentModified) {
		t.Errorf("editFlow at a stale version: %v", err)
	}
	c.shutdownExit()
}

// stuckEngine's Close never returns (until the test ends): a run that will not stop.
type stuckEngine struct {
	fakeEngine
	release chan struct{}
}

func (e *stuckEngine) Close() { <-e.release }

// The editor went away and a run will not stop: the session still ends after StopTimeout,
// saying what was stuck, so no sidecar outlives its editor.
func TestStopIsBounded(t *testing.T) {
	root, _ := workspace(t, "team.yaml", goodFlow)
	release := make(chan struct{})
	defer close(release)
	var buf bytes.Buffer
	log := &lockedWriter{w: &buf}
	c, _ := startInProcess(t, Options{Log: log, StopTimeout: 200 * time.Millisecond, Services: Services{
		NewRunEngine: func(ws string, sink RunEventSink, _ func() engine.Limits) (RunEngine, error) {
			return &stuckEngine{fakeEngine: fakeEngine{sink: sink}, release: release}, nil
		},
	}})
	c.initialize(root)
	c.mustCall("agentcanvas/listRuns", map[string]any{}, nil) // starts the engine
	c.w.Close()                                               // end of input: the editor is gone
	select {
	case <-c.exited:
	case <-time.After(deadline):
		t.Fatal("the session did not end while a run would not stop")
	}
	log.mu.Lock()
	got := buf.String()
	log.mu.Unlock()
	if !strings.Contains(got, "ending the session took longer than 200ms; exiting anyway") || !strings.Contains(got, "stuckEngine") {
		t.Errorf("the log does not say what was stuck:\n%.2000s", got)
	}
}
