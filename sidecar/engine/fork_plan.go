package engine

import (
	"sort"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/snapshot"
)

// analyse works out what the fork keeps (the interactions completed by its turn), replays
// (the turns up to it of the others), and restores (each agent's sandbox and CLI home as its
// last turn up to the fork's left them).
func (p *ForkPlan) analyse() {
	n := p.Origin.Turn
	kept := map[string]bool{}
	for _, oc := range p.at.Ended {
		if oc.Status == StatusCompleted {
			p.kept = append(p.kept, oc)
			kept[oc.ID] = true
		}
	}
	rp := &forkReplay{origin: p.Origin, turns: map[[2]string]map[int]*forkPoint{}, target: map[int]snapshot.ID{}, spend: map[string]Spend{},
		since: p.latestRuns(kept), resumable: map[string]bool{}, used: map[int]bool{}, trees: map[string]snapshot.ID{}}
	p.restore, p.homes = map[string]*forkPoint{}, map[string]*forkPoint{}
	replays := map[string]bool{}
	for seq := 1; seq <= n; seq++ {
		pt := p.points[seq]
		if pt.Sandbox != nil {
			p.restore[pt.Agent] = pt
		}
		if pt.Home != nil {
			p.homes[pt.Agent] = pt
		}
		if kept[pt.Interaction] {
			rp.keptTurns = append(rp.keptTurns, pt)
			continue
		}
		if pt.Since < rp.since[pt.Interaction] {
			continue // a run of the interaction a stop cut short, run again by a resume
		}
		k := [2]string{pt.Interaction, pt.Agent}
		if rp.turns[k] == nil {
			rp.turns[k] = map[int]*forkPoint{}
		}
		rp.turns[k][pt.Nth] = pt
		rp.spend[pt.Interaction] = pt.InteractionSpend
		replays[pt.Agent] = true
	}
	for _, oc := range p.kept {
		if m, ok := p.at.EndedBus[oc.ID]; ok {
			rp.keptBus = append(rp.keptBus, m)
		}
	}
	p.targets(rp, kept)
	for agent, pt := range p.restore {
		rp.trees[agent] = pt.Sandbox.Work
		if !replays[agent] {
			rp.carried = append(rp.carried, agent)
		}
	}
	sort.Strings(rp.carried)
	for agent, pt := range p.homes {
		rp.resumable[agent] = p.backendOf(agent) == pt.Home.Backend
	}
	p.replay = rp
}

// latestRuns is, for each interaction the fork replays (not kept), the Since of its latest run
// up to the fork's turn.
func (p *ForkPlan) latestRuns(kept map[string]bool) map[string]int {
	out := map[string]int{}
	for seq := 1; seq <= p.Origin.Turn; seq++ {
		if pt := p.points[seq]; !kept[pt.Interaction] && pt.Since >= out[pt.Interaction] {
			out[pt.Interaction] = pt.Since
		}
	}
	return out
}

// targets sets, for each replayed turn with a sandbox, the tree work/ is moved to after it:
// what the turn left, unless a later turn of the agent in a kept interaction (one the fork does
// not replay) changed it again before the fork's turn: then what that one left.
func (p *ForkPlan) targets(rp *forkReplay, kept map[string]bool) {
	n := p.Origin.Turn
	for seq := 1; seq <= n; seq++ {
		pt := p.points[seq]
		if pt.Sandbox == nil || kept[pt.Interaction] || pt.Since < rp.since[pt.Interaction] {
			continue
		}
		rp.target[seq] = pt.Sandbox.Work
		for later := seq + 1; later <= n; later++ {
			if q := p.points[later]; q.Agent == pt.Agent && q.Sandbox != nil && kept[q.Interaction] {
				rp.target[seq] = p.restore[pt.Agent].Sandbox.Work
				break
			}
		}
	}
}

// backendOf is the backend the fork runs agent with, as the engine resolves it (spec): the
// run-wide override, else the agent's own; "" when the flow has no such node.
func (p *ForkPlan) backendOf(agent string) string {
	if p.parent.DryRun {
		return runtime.BackendDryRun
	}
	if b := p.parent.Backend; b != "" && b != "auto" && !p.clearBackend {
		return b
	}
	n, ok := p.flow.NodeByID(agent)
	if !ok {
		return ""
	}
	rt := nodeRuntime(n)
	if rt == nil || rt.BackendID == "" {
		return "auto"
	}
	return rt.BackendID
}

// nodeRuntime is an agent's or a system node's runtime (nil when it has none).
func nodeRuntime(n flow.Node) *flow.Runtime {
	if n.Agent != nil {
		return n.Agent.Runtime
	}
	return n.System.Runtime
}
