package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

func init() {
	register("agentcanvas/startRun", method{handle: (*Server).startRun, async: true})
	register("agentcanvas/stopRun", method{handle: (*Server).stopRun, async: true})
	register("agentcanvas/listRuns", method{handle: (*Server).listRuns, async: true})
	register("agentcanvas/answerQuestion", method{handle: (*Server).answerQuestion, async: true})
	register("agentcanvas/provideDependency", method{handle: (*Server).provideDependency, async: true})
	register("agentcanvas/rejectDependency", method{handle: (*Server).rejectDependency, async: true})
}

const runEngineMissing = "the run engine has not landed in this build"

// engine returns the session's run engine, starting it on first use.
func (s *Server) engine() (RunEngine, error) {
	s.engineMu.Lock()
	defer s.engineMu.Unlock()
	if s.svc.Runs != nil {
		return s.svc.Runs, nil
	}
	if s.svc.NewRunEngine == nil {
		return nil, notAvailable(runEngineMissing)
	}
	root, err := s.workspace()
	if err != nil {
		return nil, err
	}
	e, err := s.svc.NewRunEngine(root, s.runEvent, s.limits)
	if err != nil {
		return nil, err
	}
	s.svc.Runs = e
	return e, nil
}

// runEvent forwards an engine event to the client and keeps the status's running flows.
func (s *Server) runEvent(ev eventlog.Event) {
	switch ev.Event {
	case "run_started":
		s.status.runChanged(s, ev.Flow, +1)
	case "run_finished":
		s.status.runChanged(s, ev.Flow, -1)
	}
	s.notify("agentcanvas/runEvent", ev)
}

// startRun runs the flow as the editor shows it: the open document's text when it is open
// (optionally at version), else the file on disk. A flow with errors is refused.
func (s *Server) startRun(ctx context.Context, params json.RawMessage) (any, error) {
	var p StartRunParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.URI == "" && p.Skill == nil {
		return nil, badParams("uri is required (the flow to run), or skill (the skill to invoke)")
	}
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	if p.Skill != nil {
		if p.Skill.Name == "" {
			return nil, badParams("skill.name is required")
		}
		return e.StartSkill(ctx, p)
	}
	a, _, err := s.flowAt(p.flowRef)
	if err != nil {
		return nil, err
	}
	if diag.HasErrors(a.diags) {
		return nil, fmt.Errorf("%s has errors; fix them before running (first: %s)", p.URI, firstError(a.diags))
	}
	p.Workspace = s.workspaceRoot()
	return e.Start(ctx, a.flow, p)
}

func firstError(ds []diag.Diagnostic) string {
	for _, d := range ds {
		if d.Severity == diag.Error {
			return d.String()
		}
	}
	return ""
}

func (s *Server) stopRun(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		RunID string `json:"runId"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RunID == "" {
		return nil, badParams("runId is required")
	}
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	return nil, e.Stop(ctx, p.RunID)
}

func (s *Server) listRuns(ctx context.Context, _ json.RawMessage) (any, error) {
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	return e.List(ctx)
}

func (s *Server) answerQuestion(ctx context.Context, params json.RawMessage) (any, error) {
	var p AnswerParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RunID == "" || p.QuestionID == "" {
		return nil, badParams("runId and questionId are required")
	}
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	return nil, e.Answer(ctx, p)
}

func (s *Server) provideDependency(ctx context.Context, params json.RawMessage) (any, error) {
	var p DependencyParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RunID == "" || p.RequestID == "" {
		return nil, badParams("runId and requestId are required")
	}
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	return nil, e.Provide(ctx, p)
}

func (s *Server) rejectDependency(ctx context.Context, params json.RawMessage) (any, error) {
	var p DependencyParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RunID == "" || p.RequestID == "" {
		return nil, badParams("runId and requestId are required")
	}
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	return nil, e.Reject(ctx, p)
}

// customMethods lists the agentcanvas/ requests (reported in initialize).
func customMethods() []string {
	var out []string
	for _, n := range MethodNames() {
		if len(n) > len("agentcanvas/") && n[:len("agentcanvas/")] == "agentcanvas/" {
			out = append(out, n)
		}
	}
	return out
}
