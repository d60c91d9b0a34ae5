package engine

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// Every agent has a limit. One whose flow sets none for it (no runtime.maxCostUsd, no
// runtime.maxModelCalls, no policy.budget) may make DefaultMaxModelCalls model calls over the
// run, so a model that keeps calling tools is stopped: the gateway counts the calls of an
// agent routed through it and refuses the one past the limit; a Claude Code agent that is not
// routed (signed in with an account) gets it as its own --max-turns, per turn. The run says so
// when it starts. runtime.maxModelCalls raises or lowers it, 0 removes it; a spend limit in
// dollars (maxCostUsd, policy.budget) replaces it.

// DefaultMaxModelCalls is the most model calls of an agent with no limit of its own.
const DefaultMaxModelCalls = 200

// defaultCallsNote is said with the default limit when it is reached.
const defaultCallsNote = "the default for an agent with no spend limit of its own: runtime.maxModelCalls raises it, 0 removes it"

// defaultCalls is the default limit of this run (tests lower it).
func (r *run) defaultCalls() int64 {
	if r.o.modelCalls > 0 {
		return int64(r.o.modelCalls)
	}
	return DefaultMaxModelCalls
}

// defaultLimited reports whether an agent of rt gets the default limit.
func (r *run) defaultLimited(rt *flow.Runtime) bool {
	return rt.MaxCostUSD == 0 && rt.MaxModelCalls == nil && !r.budget.any()
}

// agentLimit is an agent's own limit at the gateway: runtime.maxCostUsd, and its model calls.
func (r *run) agentLimit(rt *flow.Runtime) gateway.Limit {
	l := gateway.Limit{USD: rt.MaxCostUSD}
	switch {
	case rt.MaxModelCalls != nil:
		l.Calls = *rt.MaxModelCalls
	case r.defaultLimited(rt):
		l.Calls, l.Note = r.defaultCalls(), defaultCallsNote
	}
	return l
}

// limitUnrouted gives a Claude Code agent that is not routed through the gateway the default
// limit as its own turn limit, when it has neither a limit nor a turn limit of its own.
func (r *run) limitUnrouted(s *runtime.Spec, rt *flow.Runtime) {
	if s.MaxTurns == 0 && r.defaultLimited(rt) {
		s.MaxTurns = int(r.defaultCalls())
	}
}

// defaultLimitStarted is what run_started says of the default limit: the agents it applies
// to and the number (nil when none does, or nothing calls a model).
func (r *run) defaultLimitStarted() map[string]any {
	if r.o.DryRun {
		return nil
	}
	var agents []string
	for _, n := range r.f.Agents {
		rt := n.Runtime
		if rt == nil {
			rt = &flow.Runtime{}
		}
		if modelBackend(rt.BackendID, r.o.Backend) && r.defaultLimited(rt) {
			agents = append(agents, n.ID)
		}
	}
	for _, n := range r.f.SystemNodes {
		if n.Runtime != nil && modelBackend(n.Runtime.BackendID, r.o.Backend) && r.defaultLimited(n.Runtime) {
			agents = append(agents, n.ID)
		}
	}
	if len(agents) == 0 {
		return nil
	}
	return map[string]any{"maxModelCalls": r.defaultCalls(), "agents": agents,
		"message": fmt.Sprintf("%s: at most %d model calls each over the run (%s)", joinAgents(agents), r.defaultCalls(), defaultCallsNote)}
}

// modelBackend reports whether an agent of backend calls a model the engine can count.
func modelBackend(backend, override string) bool {
	if override != "" && override != "auto" {
		backend = override
	}
	switch backend {
	case "", runtime.BackendAuto, runtime.BackendClaude, runtime.BackendCodex, runtime.BackendGemini:
		return true
	}
	return false
}

func joinAgents(a []string) string {
	if len(a) <= 6 {
		return strings.Join(a, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(a[:5], ", "), len(a)-5)
}
