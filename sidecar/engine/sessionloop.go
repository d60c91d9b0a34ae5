package engine

import (
	"fmt"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// An agent with runtime.sessionLoop runs each of its turns as a session loop
// (runtime.RunSessionLoop): up to maxIterations sessions, each a new CLI process with a
// fresh context (never a resumed CLI session), delayMs apart, sharing state only through the
// files in its working folder (the feature list and progress notes). Any pattern: the loop is
// the agent's turn, its last session's reply the turn's reply.

// sessionLoop is node's runtime.sessionLoop, nil when it runs plain turns.
func (c *ictx) sessionLoop(node string) *flow.SessionLoop {
	n, ok := c.r.f.NodeByID(node)
	if !ok {
		return nil
	}
	var rt *flow.Runtime
	if n.Agent != nil {
		rt = n.Agent.Runtime
	} else if n.System != nil {
		rt = n.System.Runtime
	}
	if rt == nil || rt.SessionLoop == nil || rt.SessionLoop.MaxIterations < 1 {
		return nil
	}
	return rt.SessionLoop
}

// runSessions runs one turn of node as a session loop; each session's events are forwarded
// as a plain turn's are, between session_started and the loop's session_loop_finished.
func (c *ictx) runSessions(spec runtime.Spec, node, edge, prompt string, sl *flow.SessionLoop) (processOut, error) {
	var outs []processOut
	o := runtime.LoopOptions{MaxIterations: sl.MaxIterations, Delay: time.Duration(sl.DelayMs) * time.Millisecond,
		FeatureList: sl.FeatureList, ProgressFile: sl.ProgressFile,
		OnSession: func(n int, p *runtime.Process) {
			c.r.emit(c.in.ID, edge, "session_started", map[string]any{"agent": node, "session": n, "of": sl.MaxIterations})
			c.r.flushLog()
			outs = append(outs, c.follow(p, node, edge, spec.BackendID, false))
		}}
	lr, err := runtime.RunSessionLoop(c.ctx, spec, prompt, o)
	if err != nil {
		return processOut{}, err
	}
	fields := map[string]any{"agent": node, "sessions": len(lr.Sessions), "reason": lr.Reason, "features": lr.Features, "passing": lr.Passing}
	if lr.FeatureListError != "" {
		fields["featureListError"] = lr.FeatureListError
	}
	if len(lr.Violations) > 0 {
		fields["violations"] = lr.Violations
	}
	c.r.emit(c.in.ID, edge, "session_loop_finished", fields)
	for _, v := range lr.Violations {
		c.r.emit(c.in.ID, edge, "warning", map[string]any{"agent": node, "message": "the feature-list rules were broken in " + v})
	}
	if len(outs) == 0 {
		return processOut{res: runtime.Result{Status: runtime.StatusStopped, Reason: "stopped before its first session", Backend: spec.BackendID}}, nil
	}
	return loopOutcome(outs, lr), nil
}

// loopOutcome is the turn a session loop amounts to: the last session's reply and handoff,
// every session's turns and usage; failed when it ended on failed sessions, stopped when
// stopped.
func loopOutcome(outs []processOut, lr runtime.LoopResult) processOut {
	last := outs[len(outs)-1]
	res := last.res
	res.Turns, res.Usage, res.CostUSD, res.CostKnown = 0, runtime.Usage{}, 0, true
	for _, o := range outs {
		res.Turns += o.res.Turns
		u := o.res.Usage
		res.Usage.InputTokens += u.InputTokens
		res.Usage.CachedInputTokens += u.CachedInputTokens
		res.Usage.CacheCreationTokens += u.CacheCreationTokens
		res.Usage.OutputTokens += u.OutputTokens
		res.CostUSD += o.res.CostUSD
		res.CostKnown = res.CostKnown && o.res.CostKnown
	}
	switch lr.Reason {
	case "too many failed sessions":
		res.Status = runtime.StatusFailed
		res.Reason = fmt.Sprintf("%d sessions in a row failed, the last: %s", len(outs), firstNonEmpty(last.res.Reason, string(last.res.Status)))
	case "stopped":
		res.Status = runtime.StatusStopped
	}
	var all []string // every session's stderr, the newest kept within the transcript's bound
	var tools []transcript.ToolCall
	for _, o := range outs {
		all = append(all, o.stderrAll...)
		tools = append(tools, o.tools...)
	}
	if len(all) > transcript.MaxStderrLines {
		all = all[len(all)-transcript.MaxStderrLines:]
	}
	return processOut{res: res, handoffErr: last.handoffErr, stderr: last.stderr, stderrAll: all, redact: last.redact, tools: tools, said: last.said}
}
