package engine

import (
	"fmt"
	"strings"
)

// After every step of an agent that works in a sandbox (workers of P01 and P15, P16's
// defender, P18's executor, a skill run, any node with cwdMode agentHome), what it changed
// there goes to review: the proposal is made from the diff of its work/ against its input/,
// whether or not it wrote a HANDOFF block. A valid block gives the proposal its notes; a
// missing or invalid one is a warning naming the agent, and auto-apply holds that proposal
// for a person. A worker that changed nothing and handed nothing off is told in a warning too.

// collect makes the proposal of rep's step (once per step: after its repair turn, if any).
func (c *ictx) collect(rep *Reply) {
	if !rep.sandboxed {
		return
	}
	ctx := c.ctx
	if ctx.Err() != nil { // the interaction's timeout ended the turn: its edits still reach review
		ctx = c.r.ctx
	}
	if ctx.Err() != nil {
		return // the run was stopped
	}
	node := rep.Node
	notes := handoffNotes(rep.Handoff)
	if rep.Handoff == nil {
		notes = firstNonEmpty(c.r.carriedNotes(node), noHandoffNotes+node+": made from the changes in its sandbox.")
	}
	cr, err := c.proposal(ctx, node, c.r.secrets.str(notes))
	if err != nil {
		return // logged
	}
	for _, f := range cr.Proposal.ChangedFiles {
		rep.Changed = append(rep.Changed, f.Path)
	}
	// The sandbox outlives the step: a later step that changes nothing leaves the same diff.
	fp := fmt.Sprint(rep.Changed, cr.PatchSize)
	c.mu.Lock()
	if c.unhanded == nil {
		c.unhanded, c.diffs = map[string]string{}, map[string]string{}
	}
	same := c.diffs[node] == fp
	c.diffs[node] = fp
	c.mu.Unlock()

	block := "wrote no HANDOFF block"
	if rep.HandoffError != "" {
		block = "wrote an invalid HANDOFF block (" + rep.HandoffError + ")"
	}
	warn := func(msg string) { c.note("warning", map[string]any{"agent": node, "message": msg}) }
	held := ""
	switch {
	case rep.Handoff != nil && len(rep.Changed) == 0:
		warn(node + "'s HANDOFF block names changed files, but its sandbox does not differ from its input: nothing to review")
	case rep.Handoff != nil:
		if extra := unchangedFiles(rep.Handoff["ChangedFiles"], rep.Changed); len(extra) > 0 {
			warn(fmt.Sprintf("%s's HANDOFF block names %s, which its sandbox does not change; the proposal holds what did change: %s", node, strings.Join(extra, ", "), strings.Join(rep.Changed, ", ")))
		}
	case len(rep.Changed) > 0 && same:
		if c.expectsEdits(node) {
			warn(node + " changed nothing in its sandbox this turn and " + block + "; its proposal stays as it was")
		}
		c.mu.Lock()
		held = c.unhanded[node] // the earlier step's handoff, or its lack, still covers the diff
		c.mu.Unlock()
	case len(rep.Changed) > 0:
		held = node + " " + block + "; its proposal was made from its sandbox changes"
		warn(fmt.Sprintf("%s (%s); auto-apply holds it for review", held, strings.Join(rep.Changed, ", ")))
	case c.expectsEdits(node) || rep.HandoffError != "":
		warn(node + " changed nothing in its sandbox and " + block + ": nothing to review")
	}
	c.mu.Lock()
	if held != "" {
		c.unhanded[node] = held
	} else {
		delete(c.unhanded, node)
	}
	c.mu.Unlock()
}

// expectsEdits: node plays a worker's role and is not, this step, only asked for words (a
// contract-net bidder bidding): only then is a step without changes worth a warning.
func (c *ictx) expectsEdits(node string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return isWorker(c.roles[node]) && !c.talking[node]
}

// wordsOnly marks nodes as asked for words only until the returned func is called.
func (c *ictx) wordsOnly(nodes ...string) (done func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.talking == nil {
		c.talking = map[string]bool{}
	}
	for _, n := range nodes {
		c.talking[n] = true
	}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, n := range nodes {
			delete(c.talking, n)
		}
	}
}

// handoffNotes are a proposal's notes from a valid HANDOFF block: its goal, definition of
// done and tests.
func handoffNotes(h map[string]any) string {
	var b strings.Builder
	for _, k := range []string{"Goal", "DoD", "Tests"} {
		v := h[k]
		if l, ok := v.([]string); ok {
			v = strings.Join(l, "; ")
		}
		if s := strings.TrimSpace(fmt.Sprint(v)); v != nil && s != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			if k != "Goal" {
				b.WriteString(k + ": ")
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// unchangedFiles are the files a HANDOFF names that the sandbox's diff does not hold.
func unchangedFiles(named any, changed []string) []string {
	var list []string
	switch t := named.(type) {
	case []string:
		list = t
	case []any:
		for _, x := range t {
			list = append(list, fmt.Sprint(x))
		}
	case string:
		list = []string{t}
	}
	var out []string
	for _, f := range list {
		f = strings.TrimPrefix(strings.TrimSpace(f), "./")
		if f != "" && !containsFold(changed, f) {
			out = append(out, f)
		}
	}
	return out
}

// noHandoffNotes begins the notes of a proposal made without a HANDOFF block.
const noHandoffNotes = "No valid HANDOFF block from "
