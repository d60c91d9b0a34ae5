package server

import (
	"context"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// managerEngine is the default RunEngine: sidecar/engine's Manager, one per session.
type managerEngine struct{ m *engine.Manager }

func newManagerEngine(workspace string, sink RunEventSink, limits func() engine.Limits) (RunEngine, error) {
	// The engine's question_asked, dependency_requested and phase_completed events come
	// once the request can take an answer: the editor answers on them.
	return managerEngine{&engine.Manager{Workspace: workspace, Event: sink, Limits: limits}}, nil
}

func (e managerEngine) Start(ctx context.Context, f *flow.Flow, p StartRunParams) (any, error) {
	return e.m.Start(f, engine.StartParams{DryRun: p.DryRun, Backend: p.Backend, Task: p.Task, ResumeRunID: p.ResumeRunID, Env: p.Env})
}

func (e managerEngine) StartSkill(ctx context.Context, p StartRunParams) (any, error) {
	inv := engine.SkillInvocation{Name: p.Skill.Name, Arguments: p.Skill.Arguments, Files: p.Skill.Files, Backend: p.Backend, Command: p.Skill.Command}
	return e.m.StartSkill(inv, engine.StartParams{DryRun: p.DryRun, Env: p.Env})
}

func (e managerEngine) StartRevision(ctx context.Context, req engine.RevisionRequest, p engine.StartParams) (any, error) {
	return e.m.StartRevision(req, p)
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
