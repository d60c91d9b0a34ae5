package server

import (
	"context"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// managerEngine is the default RunEngine: sidecar/engine's Manager, one per session.
type managerEngine struct{ m *engine.Manager }

// RequestPending is the runEvent the server adds to the engine's own: a question,
// dependency request or phase approval is now waiting and can be answered. (The engine's
// question_asked, dependency_requested and phase_completed events are the log's record and
// come just before the request can take an answer.)
const RequestPending = "request_pending"

func newManagerEngine(workspace string, sink RunEventSink) (RunEngine, error) {
	var mu sync.Mutex
	flows := map[string]string{} // run id → flow name, for request_pending events
	m := &engine.Manager{Workspace: workspace}
	m.Event = func(ev eventlog.Event) {
		if ev.Event == "run_started" {
			mu.Lock()
			flows[ev.RunID] = ev.Flow
			mu.Unlock()
		}
		sink(ev)
	}
	m.Asked = func(r engine.Request) {
		mu.Lock()
		fl := flows[r.RunID]
		mu.Unlock()
		fields := map[string]any{"agent": r.AgentID, "id": r.ID, "kind": r.Kind, "fields": publicFields(r.Fields)}
		if !r.Deadline.IsZero() {
			fields["deadline"] = r.Deadline.UTC().Format(time.RFC3339)
		}
		sink(eventlog.Event{TS: time.Now().UnixMilli(), Flow: fl, RunID: r.RunID, InteractionID: r.InteractionID,
			Event: RequestPending, Fields: fields})
	}
	return managerEngine{m}, nil
}

// publicFields drops a value an agent may have put in its request: values never leave the
// agent's process.
func publicFields(f map[string]any) map[string]any {
	out := make(map[string]any, len(f))
	for k, v := range f {
		if k != "value" {
			out[k] = v
		}
	}
	return out
}

func (e managerEngine) Start(ctx context.Context, f *flow.Flow, p StartRunParams) (any, error) {
	return e.m.Start(f, engine.StartParams{DryRun: p.DryRun, Backend: p.Backend, Task: p.Task, ResumeRunID: p.ResumeRunID, Env: p.Env})
}

func (e managerEngine) StartSkill(ctx context.Context, p StartRunParams) (any, error) {
	inv := engine.SkillInvocation{Name: p.Skill.Name, Arguments: p.Skill.Arguments, Files: p.Skill.Files, Backend: p.Backend, Command: p.Skill.Command}
	return e.m.StartSkill(inv, engine.StartParams{DryRun: p.DryRun, Env: p.Env})
}

func (e managerEngine) Stop(ctx context.Context, runID string) error { return e.m.Stop(runID) }

func (e managerEngine) List(ctx context.Context) (any, error) {
	runs, err := e.m.List()
	if runs == nil {
		runs = []engine.RunInfo{}
	}
	return runs, err
}

func (e managerEngine) Answer(ctx context.Context, p AnswerParams) error {
	return e.m.Answer(p.RunID, p.QuestionID, p.Answer)
}

func (e managerEngine) Provide(ctx context.Context, p DependencyParams) error {
	return e.m.Provide(p.RunID, p.RequestID, p.Value)
}

func (e managerEngine) Reject(ctx context.Context, p DependencyParams) error {
	return e.m.Reject(p.RunID, p.RequestID, p.Reason)
}

func (e managerEngine) Close() { e.m.Close() }
