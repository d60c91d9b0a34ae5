package engine

// Provenance of a proposal: where it came from (the interaction, round, backend, the prompt
// the agent was given, its tokens and cost so far), written with the proposal so the apply
// ledger can say which agent produced which lines; and the proposal's collisions with the
// other open proposals, passed on to the run's sink (the canvas overlay, the terminal view).

import (
	"path/filepath"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// turnNote is what the last turn of a node was asked and how it ran.
type turnNote struct {
	prompt    string
	backend   string
	costKnown bool
}

// noteTurn remembers a node's turn for the proposal it may make.
func (c *ictx) noteTurn(node, prompt string, res runtime.Result) {
	c.turns.Store(node, turnNote{prompt: prompt, backend: res.Backend, costKnown: res.CostKnown})
}

// originOf is the origin of the proposal node is making now.
func (c *ictx) originOf(node string) *proposal.Origin {
	flowFile := c.r.f.File // a change to it is held (proposal/control.go)
	if abs, err := filepath.Abs(flowFile); err == nil && flowFile != "" {
		flowFile = abs
	}
	o := &proposal.Origin{Flow: c.r.f.Name, FlowFile: flowFile, FlowUses: c.r.flowUses(), InteractionID: c.in.ID, Round: c.st.Round + 1} // 1-based, as the prompt says it
	if v, ok := c.turns.Load(node); ok {
		t := v.(turnNote)
		o.Backend, o.Prompt, o.CostKnown = t.backend, promptSummary(t.prompt), t.costKnown
	}
	if a := c.r.metrics.snapshot().Agents[node]; a != nil {
		o.InputTokens, o.OutputTokens, o.CostUSD = a.InputTokens, a.OutputTokens, a.CostUSD
	}
	return o
}

// promptSummary is the intent of a prompt (its "1. Intent" section), or its first line.
func promptSummary(p string) string {
	const intent = "\n1. Intent\n"
	if i := strings.Index(p, intent); i >= 0 {
		s := p[i+len(intent):]
		if j := strings.Index(s, "\n2. Inputs"); j >= 0 {
			s = s[:j]
		}
		return truncate(strings.Join(strings.Fields(s), " "), 300)
	}
	return truncate(firstLine(p), 300)
}

// forwardConflicts tells the sink of each collision proposal.Create found (it logged them
// itself): one proposal_conflict per other proposal and file, naming both agents and runs.
func (c *ictx) forwardConflicts(node, ref string, cr *proposal.Created) {
	if c.r.o.Sink == nil {
		return
	}
	for _, f := range proposal.CollisionEvents(cr.Collisions) {
		f["agent"], f["proposal"] = node, ref
		c.r.o.Sink(eventlog.Event{TS: c.r.now().UnixMilli(), Flow: c.r.f.Name, RunID: c.r.id, InteractionID: c.in.ID, Event: "proposal_conflict", Fields: f})
	}
}
