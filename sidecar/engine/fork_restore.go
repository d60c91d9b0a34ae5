package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/agentcanvas/agentcanvas/sidecar/procalive"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/snapshot"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// Making a fork on disk. Its folder gets a marker first, naming the process making it; then
// its flow (when --set changed it), each agent's sandbox (input/ and work/ checked out of the
// snapshot store into a staging folder renamed into place), each CLI home's session store,
// the parent's transcript and fork points up to the turn, and last its state.json, after which
// the marker goes. A fork cut short (a kill, a full disk) keeps its marker and has no state: it
// is not listed, and the next fork plan removes it (cleanAbandonedForks). Every file is written
// anew: nothing is linked to the parent's, the store, or another fork's.

// forkingFile marks a fork being made; it holds the id and start time of the process making
// it (thisEngine), so a process given the same id later is not taken for it.
const forkingFile = "forking"

// materialize makes the fork's folders, transcript and state.
func (r *run) materialize(p *ForkPlan) (err error) {
	ws := r.o.Workspace
	pid, start := thisEngine()
	if err := writeRunFile(ws, r.id, forkingFile, fmt.Appendf(nil, "%d %d\n", pid, start), false); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			removeFork(ws, r.id)
		}
	}()
	forkStep(1)
	if p.flowText != nil {
		if err := writeRunFile(ws, r.id, filepath.Base(p.flow.File), p.flowText, true); err != nil {
			return err
		}
	}
	s, err := r.fp.storeFor(ws, r.id)
	if err != nil {
		return fmt.Errorf("fork: the snapshot store: %w", err)
	}
	for _, agent := range sortedKeys(p.restore) {
		if err := r.restoreSandbox(s, p, agent); err != nil {
			return fmt.Errorf("fork: %s's sandbox as turn %d left it: %w", agent, p.restore[agent].Seq, err)
		}
		forkStep(2)
	}
	for _, agent := range sortedKeys(p.homes) {
		if err := r.restoreHome(s, p, agent); err != nil {
			return fmt.Errorf("fork: %s's %s sessions as turn %d left them: %w", agent, p.homes[agent].Home.Backend, p.homes[agent].Seq, err)
		}
	}
	forkStep(3)
	if err := r.copyTurns(p); err != nil {
		return err
	}
	forkStep(4)
	st := *r.o.Resume
	if err := writeState(ws, &st, true); err != nil {
		return err
	}
	forkStep(5)
	return os.Remove(filepath.Join(ws, RunsDir, r.id, forkingFile))
}

// restoreSandbox checks agent's sandbox out of the store as its last turn up to the fork's
// left it: input/ (read-only, as prepared), work/, sandbox.json naming the fork.
func (r *run) restoreSandbox(s *snapshot.Store, p *ForkPlan, agent string) error {
	pt := p.restore[agent]
	paths, err := sandbox.PathsFor(r.o.Workspace, r.id, agent)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(paths.AgentDir), 0o755); err != nil {
		return err
	}
	staging := filepath.Join(filepath.Dir(paths.AgentDir), "."+filepath.Base(paths.AgentDir)+".fork-staging")
	if err := os.Mkdir(staging, 0o755); err != nil {
		return err
	}
	a := r.fp.agent(agent)
	a.mu.Lock()
	defer a.mu.Unlock()
	err = snapshot.Checkout(s, pt.Sandbox.Input, filepath.Join(staging, "input"), true, nil)
	if err == nil {
		err = snapshot.Checkout(s, pt.Sandbox.Work, filepath.Join(staging, "work"), false, &a.work)
	}
	if err == nil {
		err = os.Mkdir(filepath.Join(staging, "proposal"), 0o755)
	}
	var meta []byte
	if err == nil {
		meta, err = forkMeta(pt.Sandbox.Meta, r.id, agent)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(staging, sandbox.MetaFile), meta, 0o644)
	}
	if err == nil {
		err = os.Rename(staging, paths.AgentDir)
	}
	if err != nil {
		forceRemoveAll(staging)
		return err
	}
	input := pt.Sandbox.Input
	a.input, a.meta = &input, meta
	return nil
}

// forkMeta is the parent's sandbox.json for the fork's sandbox: the same base and files,
// the fork's run.
func forkMeta(parent json.RawMessage, runID, agent string) ([]byte, error) {
	var m sandbox.Meta
	if len(parent) == 0 || json.Unmarshal(parent, &m) != nil {
		m = sandbox.Meta{Version: "1", AgentID: agent}
	}
	m.RunID = runID
	if dir, err := sandbox.SanitiseAgentID(agent); err == nil {
		m.AgentDir = dir
	}
	b, err := json.MarshalIndent(m, "", "  ")
	return append(b, '\n'), err
}

// restoreHome checks agent's CLI session store out of the store into the fork's private home
// for its backend, keyed by the fork's working folder.
func (r *run) restoreHome(s *snapshot.Store, p *ForkPlan, agent string) error {
	pt := p.homes[agent]
	dir, ok := runtime.CLIHome(r.o.Workspace, r.id, agent, pt.Home.Backend)
	if !ok {
		return fmt.Errorf("no home folder for agent %q", agent)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	a := r.fp.agent(agent)
	a.mu.Lock()
	err := snapshot.Checkout(s, pt.Home.Tree, dir, false, &a.home)
	a.mu.Unlock()
	if err == nil {
		err = os.Chmod(dir, 0o700)
	}
	if err != nil {
		return err
	}
	cwd := pt.Home.Cwd
	if old, err := sandbox.PathsFor(r.o.Workspace, p.parent.RunID, agent); err == nil && cwd == old.WorkDir {
		fresh, _ := sandbox.PathsFor(r.o.Workspace, r.id, agent)
		cwd = fresh.WorkDir
	}
	return runtime.RekeySessions(pt.Home.Backend, dir, pt.Home.Cwd, cwd)
}

// copyTurns gives the fork its parent's transcript and fork points up to the turn, so its
// turns go on from the parent's numbering (and a fork of the fork can replay them).
func (r *run) copyTurns(p *ForkPlan) error {
	for _, name := range []string{transcript.FileName, ForkPointsFile} {
		b, err := readRunFile(r.o.Workspace, p.parent.RunID, name)
		if err != nil {
			return fmt.Errorf("fork: %w", err)
		}
		var out bytes.Buffer
		for line := range bytes.SplitSeq(b, []byte{'\n'}) {
			var t struct {
				Seq int `json:"seq"`
			}
			if json.Unmarshal(line, &t) == nil && t.Seq >= 1 && t.Seq <= p.Origin.Turn {
				out.Write(line)
				out.WriteByte('\n')
			}
		}
		if err := transcript.AppendRunFile(r.o.Workspace, r.id, name, out.Bytes()); err != nil {
			return err
		}
	}
	r.turns = transcript.NewWriter(r.o.Workspace, r.id)
	return nil
}

// cleanAbandonedForks removes the forks whose maker died before their state was written,
// and returns what it removed. A fork whose state was written keeps it (its marker goes).
func cleanAbandonedForks(workspace string) []string {
	entries, err := os.ReadDir(filepath.Join(workspace, RunsDir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		marker := filepath.Join(workspace, RunsDir, e.Name(), forkingFile)
		b, err := os.ReadFile(marker)
		if err != nil || checkRunID(e.Name()) != nil {
			continue
		}
		var pid int
		var start uint64
		fmt.Sscan(string(b), &pid, &start) // an older marker holds the id alone
		if pid == os.Getpid() || pid > 0 && procalive.Same(pid, start) {
			continue // being made
		}
		if _, err := os.Stat(filepath.Join(workspace, RunsDir, e.Name(), "state.json")); err == nil {
			os.Remove(marker)
			continue
		}
		removeFork(workspace, e.Name())
		out = append(out, fmt.Sprintf("removed fork %s, left half-made by process %d, which died while making it", e.Name(), pid))
	}
	sort.Strings(out)
	return out
}

// removeFork removes everything a fork had made.
func removeFork(workspace, runID string) {
	forceRemoveAll(filepath.Join(workspace, filepath.FromSlash(sandbox.Dir), runID))
	forceRemoveAll(filepath.Join(workspace, RunsDir, runID))
	for _, ext := range []string{".pack", ".idx"} {
		os.Remove(filepath.Join(workspace, filepath.FromSlash(snapshot.Dir), "packs", runID+ext))
	}
}

// forceRemoveAll removes a tree whose folders may be read-only (a sandbox's input/).
func forceRemoveAll(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "agentcanvas: fork: removing %s: %v\n", dir, err)
	}
}

// forkKillEnv is the fault tests' kill switch: set to k, the process kills itself (SIGKILL)
// at step k of making a fork. Only tests set it.
const forkKillEnv = "AGENTCANVAS_TEST_KILL_FORK_AT"

func forkStep(k int) {
	if v := os.Getenv(forkKillEnv); v != "" && v == strconv.Itoa(k) {
		p, _ := os.FindProcess(os.Getpid())
		p.Kill()
		select {}
	}
}
