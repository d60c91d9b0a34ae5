package server

import (
	"context"
	"encoding/json"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
)

func init() {
	register("agentcanvas/forkRun", method{handle: (*Server).forkRun, async: true})
}

// ForkRunParams: agentcanvas/forkRun (docs/runs.md, Forks).
type ForkRunParams struct {
	RunID string   `json:"runId"`
	At    int      `json:"at"`
	Set   []string `json:"set,omitempty"`
	// PlanOnly answers with what the fork would restore and what it cannot, and starts nothing.
	PlanOnly bool `json:"planOnly,omitempty"`
	// Env: secret values from the editor, as for startRun; never logged or written.
	Env map[string]string `json:"env,omitempty"`
}

// ForkRunResult is the plan, and the run when one was started.
type ForkRunResult struct {
	Plan *engine.ForkPlan `json:"plan"`
	Run  *engine.RunInfo  `json:"run,omitempty"`
}

// forker is a run engine that makes forks (the default one, sidecar/engine's Manager).
type forker interface {
	Fork(ctx context.Context, plan *engine.ForkPlan, env map[string]string) (engine.RunInfo, error)
}

func (e managerEngine) Fork(ctx context.Context, plan *engine.ForkPlan, env map[string]string) (engine.RunInfo, error) {
	return e.m.StartFork(plan, engine.StartParams{Env: env})
}

// forkRun plans a fork of a run from the end of one of its turns and, unless planOnly, starts
// it; its events follow as runEvents. A refusal (no such run or turn, a --set that does not
// fit the flow) is -32803 naming what is wrong.
func (s *Server) forkRun(ctx context.Context, params json.RawMessage) (any, error) {
	var p ForkRunParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RunID == "" || p.At == 0 {
		return nil, badParams("runId and at (the turn to fork from) are required")
	}
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	f, ok := e.(forker)
	if !ok {
		return nil, notAvailable("forks in this run engine")
	}
	plan, err := engine.PlanFork(s.workspaceRoot(), engine.ForkRequest{RunID: p.RunID, At: p.At, Set: p.Set})
	if err != nil {
		return nil, err
	}
	if p.PlanOnly {
		return ForkRunResult{Plan: plan}, nil
	}
	info, err := f.Fork(ctx, plan, p.Env)
	if err != nil {
		return nil, err
	}
	return ForkRunResult{Plan: plan, Run: &info}, nil
}
