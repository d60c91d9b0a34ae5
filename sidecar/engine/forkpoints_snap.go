package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/snapshot"
)

// Snapshots for fork points: a sandbox's input/ once, when it is prepared, then its work/ and
// its CLI's session store at the end of each of the agent's turns. A snapshot that fails is a
// warning (said once per agent and cause), never the turn's failure: the run goes on, and a
// fork from that turn says what it cannot restore.

// snapshotPrepared keeps a sandbox prepared just now: its input/ (the base of every later
// snapshot of the agent in the run) and, without reading it, that work/ is its copy.
func (r *run) snapshotPrepared(node string) {
	s, a, ok := r.snapshotsOf(node)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := r.snapshotBase(s, a, node, true); err != nil {
		r.snapshotWarning(node, "its prepared sandbox", err)
	}
}

// snapshotBase takes the agent's input/ and sandbox.json; prime: work/ was copied with it.
// Called with a.mu held.
func (r *run) snapshotBase(s *snapshot.Store, a *agentSnaps, node string, prime bool) error {
	paths, err := sandbox.PathsFor(r.o.Workspace, r.id, node)
	if err != nil {
		return err
	}
	var t snapshot.Tracker
	res, err := t.Take(s, paths.InputDir, snapshot.Limits{})
	if err != nil {
		return err
	}
	r.omitted(node, "input/", res.Omitted)
	a.input = &res.Tree
	if b, err := os.ReadFile(filepath.Join(paths.AgentDir, sandbox.MetaFile)); err == nil && json.Valid(b) {
		a.meta = b
	}
	if prime {
		return a.work.Prime(s, paths.WorkDir, res.Tree)
	}
	return nil
}

// snapshotsOf opens the store and the agent's trackers; false (after a warning) when the
// store cannot be opened.
func (r *run) snapshotsOf(node string) (*snapshot.Store, *agentSnaps, bool) {
	s, err := r.fp.storeFor(r.o.Workspace, r.id)
	if err != nil {
		if r.firstTime("snapshot-store") {
			r.emit("", "", "warning", map[string]any{"message": "the sandboxes' snapshots cannot be kept, so this run cannot be forked: " + err.Error()})
		}
		return nil, nil, false
	}
	return s, r.fp.agent(node), true
}

// snapshotSandbox keeps node's work/ after a turn; nil when it has no sandbox of this run's
// (it works in the workspace, or in an earlier run's sandbox: a revision).
func (r *run) snapshotSandbox(node string, spec runtime.Spec) *sandboxPoint {
	if spec.SandboxWork == "" || r.sandboxRun(node) != r.id {
		return nil
	}
	s, a, ok := r.snapshotsOf(node)
	if !ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.input == nil { // prepared by the engine before this one (a resumed run)
		if err := r.snapshotBase(s, a, node, false); err != nil {
			r.snapshotWarning(node, "its sandbox", err)
			return nil
		}
	}
	res, err := a.work.Take(s, spec.SandboxWork, snapshot.Limits{})
	if err != nil {
		r.snapshotWarning(node, "its sandbox", err)
		return nil
	}
	r.omitted(node, "work/", res.Omitted)
	return &sandboxPoint{Input: *a.input, Work: res.Tree, Omitted: res.Omitted, Meta: a.meta,
		Cost: &snapshotCost{Files: res.Files, Hashed: res.Hashed, StoredBytes: res.StoredBytes, Micros: res.Elapsed.Microseconds()}}
}

// snapshotHome keeps the session store of node's private CLI home after a turn of backend;
// nil for a backend without one, or a home that is an earlier run's (a revision).
func (r *run) snapshotHome(node string, spec runtime.Spec, backend string) *homePoint {
	only, ok := runtime.SessionStores[backend]
	if !ok || r.sandboxRun(node) != r.id {
		return nil
	}
	dir, ok := runtime.CLIHome(r.o.Workspace, r.id, node, backend)
	if st, err := os.Stat(dir); !ok || err != nil || !st.IsDir() {
		return nil
	}
	s, a, ok := r.snapshotsOf(node)
	if !ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	res, err := a.home.Take(s, dir, snapshot.Limits{Only: only})
	if err != nil {
		r.snapshotWarning(node, "its "+backend+" sessions", err)
		return nil
	}
	cwd := spec.Workspace
	if spec.CwdMode == runtime.CwdAgentHome && spec.SandboxWork != "" {
		cwd = spec.SandboxWork
	}
	return &homePoint{Backend: backend, Tree: res.Tree, Cwd: cwd}
}

func (r *run) snapshotWarning(node, what string, err error) {
	if r.firstTime("snapshot:" + node + ":" + what) {
		r.emit("", "", "warning", map[string]any{"agent": node, "message": fmt.Sprintf("%s of %s cannot be kept for forks of this run: %v", what, node, err)})
	}
}

// omitted warns, once per path, of files a snapshot left out: a fork will not have them.
func (r *run) omitted(node, where string, oms []snapshot.Omission) {
	for _, o := range oms {
		if r.firstTime("omitted:" + node + ":" + where + o.Path) {
			r.emit("", "", "warning", map[string]any{"agent": node, "message": fmt.Sprintf("%s%s in %s's sandbox is not kept for forks of this run: %s", where, o.Path, node, o.Reason)})
		}
	}
}

// keepForkPoint writes the fork point of the turn recorded as seq: its sandbox and session
// store kept first, then the line that names them.
func (c *ictx) keepForkPoint(seq, nth int, node string, spec runtime.Spec, out processOut, took int64) {
	if seq == 0 {
		return
	}
	r := c.r
	p := &forkPoint{Seq: seq, Interaction: c.in.ID, Agent: node, Nth: nth, Since: c.since, DurationMs: took, Result: out.res, HandoffError: out.handoffErr,
		StartFailed: out.redact == nil && out.res.Status == runtime.StatusFailed}
	// As the transcript: the process's secrets and the run's (secrets.go) masked.
	p.Result.Reply, p.Result.Reason = r.secrets.str(p.Result.Reply), r.secrets.str(p.Result.Reason)
	if h, ok := r.secrets.any(scrubHandoff(out, out.res.Handoff)).(map[string]any); ok {
		p.Result.Handoff = h
	}
	c.mu.Lock()
	p.Session = c.sessions[node]
	c.mu.Unlock()
	p.Sandbox = r.snapshotSandbox(node, spec)
	p.Home = r.snapshotHome(node, spec, out.res.Backend)
	p.Spend, p.AgentSpend, p.InteractionSpend = r.settledSpend(c, node)
	p.Ended, p.EndedBus = r.endedOutcomes(), r.fp.endedBus()
	if err := appendForkPoint(r.o.Workspace, r.id, p); err != nil && r.firstTime("forkpoints") {
		r.emit("", "", "warning", map[string]any{"message": "the run's fork points cannot be written, so it cannot be forked from this turn on: " + err.Error()})
	}
}

// scrubHandoff is a HANDOFF block's fields with the process's secrets masked, as the reply is;
// nil when there is nothing to scrub with (no process ran).
func scrubHandoff(out processOut, h map[string]any) map[string]any {
	if h == nil {
		return nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil
	}
	s := out.scrub(string(b))
	var back map[string]any
	if s == "" || json.Unmarshal([]byte(s), &back) != nil {
		return nil
	}
	return normalHandoff(back)
}
