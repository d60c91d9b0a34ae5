package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/snapshot"
)

// Replaying. A fork runs the interactions that had not completed at its turn from their
// start, as any run does, but a turn its parent had finished by then is not run: when the
// interaction asks an agent for its Nth turn and the parent's Nth turn of that agent there is
// a fork point up to the fork's turn, the engine takes that turn's result instead, moves the
// agent's work/ to what the turn left (so the proposal made after it is the parent's), and
// notes the session it reported. So the fork's bus messages, rounds, replies and termination
// state at its turn are the parent's, made by the same executors, and the first turn it runs
// is the first one the parent had not finished.

// forkReplay is what a fork replays and restores.
type forkReplay struct {
	origin ForkOrigin
	// turns: (interaction, agent) → the agent's Nth turn there → its fork point.
	turns map[[2]string]map[int]*forkPoint
	// target: a replayed turn's seq → the tree the agent's work/ is moved to after it.
	target map[int]snapshot.ID
	// spend: an interaction replayed → its spend at the fork's turn; since: the Since of the
	// run of it the fork goes on with.
	spend map[string]Spend
	since map[string]int
	// resumable: agents whose CLI session may be resumed (their backend is the one that made it).
	resumable map[string]bool
	// carried: agents whose sandbox comes back but who are not replayed: the fork makes their
	// proposal from it when it starts.
	carried []string
	// keptBus and keptTurns are the metrics of the interactions kept (not replayed): their
	// buses' messages and their turns.
	keptBus   []bus.Metrics
	keptTurns []*forkPoint

	mu    sync.Mutex
	used  map[int]bool
	trees map[string]snapshot.ID // agent → what its work/ holds now
}

// interactionSince is the Since of interaction's fork points (forkpoints.go): the transcript's
// length as it begins, or in a fork that replays it, the Since of the run of it replayed.
func (r *run) interactionSince(interaction string) int {
	if r.fork != nil {
		if since, ok := r.fork.since[interaction]; ok {
			return since
		}
	}
	if r.turns == nil {
		return 0 // a run without a transcript (tests that cast an interaction alone)
	}
	return r.turns.Len()
}

// replayed is the fork point of the turn the fork replays for agent's nth turn in
// interaction; nil when the turn runs (not a fork, or a turn the parent had not finished).
func (r *run) replayed(interaction, agent string, nth int) *forkPoint {
	if r.fork == nil {
		return nil
	}
	f := r.fork
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.turns[[2]string{interaction, agent}][nth]
	if p == nil || f.used[p.Seq] {
		return nil
	}
	f.used[p.Seq] = true
	return p
}

// replay stands in for a turn the parent finished: the agent's sandbox as the turn left it,
// the session it reported, its result.
func (c *ictx) replay(node string, p *forkPoint) (processOut, error) {
	if err := c.r.moveSandbox(node, p.Seq); err != nil {
		return processOut{}, fmt.Errorf("replaying turn %d of run %s: %w", p.Seq, c.r.fork.origin.RunID, err)
	}
	// A session id becomes a CLI argument: only one of the form a CLI gives is taken from the
	// fork points (an unconfined agent could have written them).
	if validSessionID(p.Session) && c.r.fork.resumable[node] {
		c.mu.Lock()
		c.sessions[node] = p.Session
		c.mu.Unlock()
		c.keepSession(node, p.Result.Backend, p.Session)
	}
	c.r.metrics.addTurn(node, p.Result, time.Duration(p.DurationMs)*time.Millisecond)
	if p.StartFailed {
		return processOut{}, errors.New(p.Result.Reason)
	}
	return processOut{res: p.Result, handoffErr: p.HandoffError}, nil
}

// moveSandbox moves node's work/ to the tree the replayed turn seq left, touching only the
// files that differ.
func (r *run) moveSandbox(node string, seq int) error {
	f := r.fork
	f.mu.Lock()
	to, ok := f.target[seq]
	from := f.trees[node]
	f.mu.Unlock()
	if !ok || from == to {
		return nil
	}
	s, a, ok := r.snapshotsOf(node)
	if !ok {
		return errors.New("the snapshot store cannot be opened")
	}
	paths, err := sandbox.PathsFor(r.o.Workspace, r.id, node)
	if err != nil {
		return err
	}
	a.mu.Lock()
	err = snapshot.Switch(s, paths.WorkDir, from, to, &a.work)
	a.mu.Unlock()
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.trees[node] = to
	f.mu.Unlock()
	return nil
}

// forkSpendOf gives an interaction the fork replays its spend at the fork's turn.
func (r *run) forkSpendOf(c *ictx) {
	if r.fork == nil {
		return
	}
	if sp, ok := r.fork.spend[c.in.ID]; ok {
		sp.Unreported = slices.Clone(sp.Unreported)
		c.spend = sp
	}
}

// forkBegins logs the fork's start (run_started with forkOf) and makes the proposals of the
// agents whose sandbox came back without a turn to replay.
func (r *run) forkBegins(started map[string]any) {
	started["forkOf"] = r.fork.origin
	r.emit("", "", "run_started", started)
	for _, m := range r.fork.keptBus {
		r.metrics.addBus(m)
	}
	for _, pt := range r.fork.keptTurns {
		r.metrics.addTurn(pt.Agent, pt.Result, time.Duration(pt.DurationMs)*time.Millisecond)
	}
	done := r.logThrough() // proposal.Create logs to the same file
	defer done()
	for _, node := range r.fork.carried {
		r.carryProposal(r.ctx, node)
	}
}

// carryProposal makes node's proposal from its restored sandbox, when it changed anything.
func (r *run) carryProposal(ctx context.Context, node string) {
	notes := fmt.Sprintf("Carried into fork %s from run %s at turn %d.", r.id, r.fork.origin.RunID, r.fork.origin.Turn)
	cr, err := proposal.Create(ctx, proposal.CreateOptions{Workspace: r.o.Workspace, RunID: r.id, AgentID: node, Notes: notes,
		Flow: r.f.Name, SkipUnchanged: true, Rules: r.limits().Rules, Origin: &proposal.Origin{Flow: r.f.Name}})
	if err != nil {
		r.emit("", "", "warning", map[string]any{"agent": node, "message": "the fork could not make " + node + "'s proposal from its restored sandbox: " + err.Error()})
		return
	}
	if len(cr.Proposal.ChangedFiles) == 0 {
		return
	}
	dir, _ := sandbox.RelDir(r.id, node)
	ref := filepath.ToSlash(filepath.Join(dir, "proposal", "proposal.json"))
	r.mu.Lock()
	r.proposals = append(r.proposals, ref)
	r.mu.Unlock()
	if r.o.Sink != nil {
		r.o.Sink(eventlog.Event{TS: r.now().UnixMilli(), Flow: r.f.Name, RunID: r.id, Event: "proposal_created",
			Fields: map[string]any{"agent": node, "proposal": ref, "changedFiles": cr.Proposal.ChangedFiles, "conflicts": len(cr.Collisions)}})
	}
}

// keepTurn records a turn the engine ran — in the transcript, then as a fork point — and
// nothing for a replayed one (the fork's transcript and fork points begin with its parent's).
func (c *ictx) keepTurn(rec turnRecord, out processOut, spec runtime.Spec, nth int, replayed *forkPoint) {
	if replayed != nil {
		return
	}
	seq := c.record(rec, out.res)
	c.keepForkPoint(seq, nth, rec.node, spec, out, c.r.now().Sub(rec.started).Milliseconds())
}
