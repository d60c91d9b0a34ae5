package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// What a fork cannot restore is said before it starts: per agent (its files, its session, a
// turn it had under way) and for the whole run (what happened outside the sandboxes).

// sayLimits fills the plan's Agents and Limits.
func (p *ForkPlan) sayLimits() {
	n := p.Origin.Turn
	last := map[string]*forkPoint{}
	for seq := 1; seq <= n; seq++ {
		last[p.points[seq].Agent] = p.points[seq]
	}
	for _, id := range agentIDs(p.flow) {
		a := ForkAgent{ID: id}
		p.sayFiles(&a, last[id])
		p.saySession(&a, last[id])
		p.sayUnderWay(&a)
		p.Agents = append(p.Agents, a)
	}
	p.Limits = append(p.Limits, fmt.Sprintf("nothing outside the sandboxes is undone: what turns 1 to %d did elsewhere (network calls, messages sent, files written outside a sandbox) stays done.", n))
	p.sayApplied()
	p.sayUnreplayable()
	if st := p.parent; st.engineRunning() {
		p.Limits = append(p.Limits, fmt.Sprintf("run %s is still running: the fork starts from turn %d as it was kept, and what %s does next does not reach it.", st.RunID, n, st.RunID))
	}
	for _, in := range p.flow.Interactions {
		_, params := in.Settings()
		for _, k := range []string{"test_command", "verify_command"} {
			if params[k] != nil && p.replaysIn(in.ID) {
				p.Limits = append(p.Limits, fmt.Sprintf("interaction %s's %s runs again while its turns are replayed.", in.ID, k))
			}
		}
	}
}

func (p *ForkPlan) replaysIn(interaction string) bool {
	for k := range p.replay.turns {
		if k[0] == interaction {
			return true
		}
	}
	return false
}

// sayFiles says what becomes of an agent's files.
func (p *ForkPlan) sayFiles(a *ForkAgent, last *forkPoint) {
	pt := p.restore[a.ID]
	switch {
	case pt != nil:
		a.Restored = true
		a.Files = fmt.Sprintf("its sandbox comes back as turn %d left it", pt.Seq)
		for _, o := range pt.Sandbox.Omitted {
			a.Limits = append(a.Limits, fmt.Sprintf("%s was not kept at turn %d (%s): the fork does not have it", o.Path, pt.Seq, o.Reason))
		}
	case last == nil:
		a.Files = fmt.Sprintf("it had not run by turn %d: it starts as in a new run", p.Origin.Turn)
	case p.hadSandbox(a.ID):
		a.Files = "its sandbox starts anew from the workspace as it is now"
		a.Limits = append(a.Limits, fmt.Sprintf("its sandbox was not kept at turn %d (the run's log says why)", last.Seq))
	default:
		a.Files = "it works in the workspace, which a fork does not rewind: it sees it as it is now"
	}
}

// hadSandbox: the parent prepared a sandbox for agent.
func (p *ForkPlan) hadSandbox(agent string) bool {
	paths, err := sandbox.PathsFor(p.workspace, p.parent.RunID, agent)
	if err != nil {
		return false
	}
	_, err = os.Stat(paths.WorkDir)
	return err == nil
}

// saySession says what becomes of an agent's CLI session.
func (p *ForkPlan) saySession(a *ForkAgent, last *forkPoint) {
	if last == nil {
		return
	}
	backend := firstNonEmpty(last.Result.Backend, p.backendOf(a.ID))
	next := p.replayedLast(a.ID)
	switch {
	case backend == runtime.BackendDryRun:
		a.Session = "the dry-run backend keeps no session"
	case backend == runtime.BackendCommand:
		a.Session = "a command agent keeps no session: each of its turns is sent its whole prompt"
	case next == nil:
		a.Session = "its next turn is in an interaction it has not begun: a fresh context, as in any run"
	case !validSessionID(next.Session):
		a.Session = "no session was reported by its last turn: its next turn starts a fresh context"
	case p.homes[a.ID] == nil:
		a.Limits = append(a.Limits, fmt.Sprintf("its %s session was not kept at turn %d: its next turn starts a fresh context", backend, next.Seq))
		a.Session = "a fresh context"
	case !p.replay.resumable[a.ID]:
		a.Limits = append(a.Limits, fmt.Sprintf("its %s session of turn %d cannot be resumed by %s: its next turn starts a fresh context", p.homes[a.ID].Home.Backend, next.Seq, p.backendOf(a.ID)))
		a.Session = "a fresh context (its backend changed)"
	default:
		a.Resumed = true
		a.Session = fmt.Sprintf("its %s session %s resumes as turn %d left it", backend, next.Session, next.Seq)
	}
}

// replayedLast is agent's last turn the fork replays, nil when none.
func (p *ForkPlan) replayedLast(agent string) *forkPoint {
	var last *forkPoint
	for k, byN := range p.replay.turns {
		if k[1] != agent {
			continue
		}
		for _, pt := range byN {
			if last == nil || pt.Seq > last.Seq {
				last = pt
			}
		}
	}
	return last
}

// sayUnderWay names an agent's turns that had started, not ended, when the fork's turn ended:
// the fork runs them again from their start.
func (p *ForkPlan) sayUnderWay(a *ForkAgent) {
	i := slices.IndexFunc(p.turns, func(t transcript.Turn) bool { return t.Seq == p.Origin.Turn })
	if i < 0 {
		return // its line was torn: its fork point stands for it
	}
	at := p.turns[i]
	end := at.Started.Add(time.Duration(at.DurationMs) * time.Millisecond)
	for _, t := range p.turns[i+1:] {
		if t.Agent == a.ID && t.Started.Before(end) {
			a.Limits = append(a.Limits, fmt.Sprintf("its turn %d was under way when turn %d ended: the fork runs it again from its start", t.Seq, p.Origin.Turn))
		}
	}
}

// sayApplied names the parent's proposals applied to the workspace.
func (p *ForkPlan) sayApplied() {
	for _, ref := range p.parent.Proposals {
		b, err := os.ReadFile(filepath.Join(p.workspace, filepath.Dir(filepath.Dir(filepath.FromSlash(ref))), filepath.FromSlash(proposal.StatusFile)))
		var st proposal.Status
		if err != nil || json.Unmarshal(b, &st) != nil || st.State != "applied" {
			continue
		}
		agent := filepath.Base(filepath.Dir(filepath.Dir(filepath.FromSlash(ref))))
		p.Limits = append(p.Limits, fmt.Sprintf("run %s's proposal of %s was applied to the workspace (%s): the fork does not undo it, and a sandbox it prepares anew copies the workspace with it.", p.parent.RunID, agent, strings.Join(st.Files, ", ")))
	}
}

// sayUnreplayable names the turns the fork would replay whose interaction or agent the flow no
// longer has: the flow changed since, and the interaction runs from there without them.
func (p *ForkPlan) sayUnreplayable() {
	var seqs []int
	for k, byN := range p.replay.turns {
		if in := p.interaction(k[0]); in == nil || !inEdges(in, k[1]) {
			for _, pt := range byN {
				seqs = append(seqs, pt.Seq)
			}
		}
	}
	sort.Ints(seqs)
	for _, seq := range seqs {
		pt := p.points[seq]
		p.Limits = append(p.Limits, fmt.Sprintf("turn %d (%s in %s) cannot be replayed: the flow no longer has %s there, and the interaction runs without it", seq, pt.Agent, pt.Interaction, pt.Agent))
	}
}

func (p *ForkPlan) interaction(id string) *flow.Interaction {
	for _, in := range p.flow.Interactions {
		if in.ID == id {
			return in
		}
	}
	return nil
}

// inEdges: node is an end of one of the interaction's edges.
func inEdges(in *flow.Interaction, node string) bool {
	for _, e := range in.Edges {
		if e.Source == node || e.Target == node {
			return true
		}
	}
	return false
}
