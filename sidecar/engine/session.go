package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// A sandboxed agent's last CLI session is kept beside its proposal, so that a revision run
// (revise.go), a new run with a new id, can resume the session that made the proposal. It is
// in the agent's sandbox folder, which the confined agent cannot write (only work/), and
// holds no secret: the backend and the CLI's session id.

// sessionFile is the kept session's file in the agent's sandbox folder.
const sessionFile = "session.json"

// keptSession is sessionFile.
type keptSession struct {
	Backend string `json:"backend"` // the resolved backend: claude, codex, gemini
	Session string `json:"session"` // the CLI's session (thread) id
	RunID   string `json:"runId"`   // the run whose turn reported it
}

// validSessionID: what a CLI session id may look like (a UUID, for the three CLIs): it
// becomes an argument of the CLI, so nothing else is taken from the file.
func validSessionID(id string) bool {
	if id == "" || len(id) > 128 || !isAlnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && !strings.ContainsRune("._:-", rune(c)) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// keepSession writes the agent's last session into its sandbox folder (sandboxRun's), when
// it has one; replaced atomically, so a reader sees the old or the new one.
func keepSession(workspace, sandboxRun, agent string, ks keptSession) error {
	if !validSessionID(ks.Session) {
		return fmt.Errorf("session id %q is not one a CLI gives", ks.Session)
	}
	paths, err := sandbox.PathsFor(workspace, sandboxRun, agent)
	if err != nil {
		return err
	}
	if st, err := os.Stat(paths.AgentDir); err != nil || !st.IsDir() {
		return nil // no sandbox (a workspace agent): no proposal to revise
	}
	b, err := json.Marshal(ks)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(paths.AgentDir, "."+sessionFile+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err = errors.Join(err, tmp.Close()); err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(paths.AgentDir, sessionFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// loadSession reads the session kept in the agent's sandbox folder of run; ok is false when
// none was kept (a command agent, an older run).
func loadSession(workspace, run, agent string) (ks keptSession, ok bool, err error) {
	paths, err := sandbox.PathsFor(workspace, run, agent)
	if err != nil {
		return ks, false, err
	}
	b, err := os.ReadFile(filepath.Join(paths.AgentDir, sessionFile))
	if errors.Is(err, fs.ErrNotExist) {
		return ks, false, nil
	}
	if err != nil {
		return ks, false, err
	}
	if err := json.Unmarshal(b, &ks); err != nil {
		return ks, false, fmt.Errorf("%s: %w", filepath.Join(paths.AgentDir, sessionFile), err)
	}
	if !validSessionID(ks.Session) || ks.Backend == "" {
		return ks, false, fmt.Errorf("%s: no valid backend and session id", filepath.Join(paths.AgentDir, sessionFile))
	}
	return ks, true, nil
}

// keepSession keeps node's session in its sandbox folder; a failure is a warning (a later
// revision then starts a fresh context).
func (c *ictx) keepSession(node, backend, session string) {
	err := keepSession(c.r.o.Workspace, c.r.sandboxRun(node), node, keptSession{Backend: backend, Session: session, RunID: c.r.id})
	if err != nil {
		c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": fmt.Sprintf("the session of %s cannot be kept for a revision of its proposal (a revision will start a fresh context): %v", node, err)})
	}
}

// revisionSession points a revision run's turn of node (one working in an earlier run's
// sandbox, Options.SandboxOf) at that run's private CLI home and, on its first turn, at the
// session kept there, resumed when the backend is still the same (runtime.Spec.ResumeBackend).
func (c *ictx) revisionSession(node string, s *runtime.Spec) {
	orig := c.r.sandboxRun(node)
	if orig == c.r.id || s.CwdMode != runtime.CwdAgentHome {
		return
	}
	s.HomeRunID = orig
	if s.ResumeSession != "" {
		return // a later turn of this run: its own session
	}
	ks, ok, err := loadSession(c.r.o.Workspace, orig, node)
	if err != nil {
		c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": fmt.Sprintf("the session that made %s's proposal cannot be resumed (%v): it starts a fresh context", node, err)})
		return
	}
	if ok {
		s.ResumeSession, s.ResumeBackend = ks.Session, ks.Backend
	}
}
