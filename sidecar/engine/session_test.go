package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// A sandboxed agent's session is kept beside its proposal for a revision run; an agent with
// no sandbox keeps none, and a session id that is not one a CLI gives (it becomes the CLI's
// argument) is neither written nor read back.
func TestKeptSession(t *testing.T) {
	ws := t.TempDir()
	paths, err := sandbox.PathsFor(ws, "run-1", "coder")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(paths.WorkDir, 0o755); err != nil {
		t.Fatal(err)
	}
	want := keptSession{Backend: runtime.BackendClaude, Session: "0b9c6a4e-1f2d-4c3b-9a8e-7d6c5b4a3f21", RunID: "run-1"}
	if err := keepSession(ws, "run-1", "coder", want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := loadSession(ws, "run-1", "coder")
	if err != nil || !ok || got != want {
		t.Fatalf("kept %+v, read back %+v %v %v", want, got, ok, err)
	}
	if st, err := os.Stat(filepath.Join(paths.AgentDir, sessionFile)); err != nil || st.Mode().Perm()&0o022 != 0 {
		t.Errorf("session file: %v %v", st, err)
	}

	// No sandbox: nothing kept, nothing read.
	if err := keepSession(ws, "run-1", "lead", want); err != nil {
		t.Errorf("an agent without a sandbox: %v", err)
	}
	if _, ok, err := loadSession(ws, "run-1", "lead"); ok || err != nil {
		t.Errorf("a session for an agent without a sandbox: %v %v", ok, err)
	}
	// Not a session id: refused both ways.
	if err := keepSession(ws, "run-1", "coder", keptSession{Backend: "claude", Session: "--dangerously-skip-permissions"}); err == nil {
		t.Error("an option kept as a session id")
	}
	if err := os.WriteFile(filepath.Join(paths.AgentDir, sessionFile), []byte(`{"backend":"claude","session":"--dangerously-skip-permissions"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := loadSession(ws, "run-1", "coder"); ok || err == nil || !strings.Contains(err.Error(), sessionFile) {
		t.Errorf("an option read as a session id: %v %v", ok, err)
	}
}

// A revision run's turn of a worker uses the private CLI home of the run that made the
// proposal and resumes the session kept there (only as that session's backend); a later turn
// resumes its own session; an agent of an ordinary run gets neither; a session file that
// cannot be read is a warning and a fresh context.
func TestRevisionSessionChoice(t *testing.T) {
	ws := t.TempDir()
	paths, _ := sandbox.PathsFor(ws, "orig-run", "coder")
	if err := os.MkdirAll(paths.WorkDir, 0o755); err != nil {
		t.Fatal(err)
	}
	kept := keptSession{Backend: runtime.BackendCodex, Session: "thread-1", RunID: "orig-run"}
	if err := keepSession(ws, "orig-run", "coder", kept); err != nil {
		t.Fatal(err)
	}
	log, err := eventlog.Open(ws, "t")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	rec := &recorder{}
	ictxOf := func(sandboxOf map[string]string) *ictx {
		r := &run{f: &flow.Flow{Name: "t"}, id: "rev-run", log: log, now: time.Now, o: Options{Workspace: ws, SandboxOf: sandboxOf, Sink: rec.sink}}
		return &ictx{r: r, in: &flow.Interaction{ID: "revise"}}
	}
	rev := ictxOf(map[string]string{"coder": "orig-run"})

	s := runtime.Spec{AgentID: "coder", CwdMode: runtime.CwdAgentHome}
	rev.revisionSession("coder", &s)
	if s.HomeRunID != "orig-run" || s.ResumeSession != "thread-1" || s.ResumeBackend != runtime.BackendCodex {
		t.Errorf("first revision turn: home %q, resume %q as %q", s.HomeRunID, s.ResumeSession, s.ResumeBackend)
	}
	s = runtime.Spec{AgentID: "coder", CwdMode: runtime.CwdAgentHome, ResumeSession: "thread-2"}
	rev.revisionSession("coder", &s)
	if s.HomeRunID != "orig-run" || s.ResumeSession != "thread-2" || s.ResumeBackend != "" {
		t.Errorf("later revision turn: home %q, resume %q as %q", s.HomeRunID, s.ResumeSession, s.ResumeBackend)
	}
	s = runtime.Spec{AgentID: "coder", CwdMode: runtime.CwdAgentHome}
	ictxOf(nil).revisionSession("coder", &s)
	if s.HomeRunID != "" || s.ResumeSession != "" {
		t.Errorf("an ordinary run's turn: home %q, resume %q", s.HomeRunID, s.ResumeSession)
	}

	if err := os.WriteFile(filepath.Join(paths.AgentDir, sessionFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = runtime.Spec{AgentID: "coder", CwdMode: runtime.CwdAgentHome}
	rev.revisionSession("coder", &s)
	if s.HomeRunID != "orig-run" || s.ResumeSession != "" {
		t.Errorf("unreadable session file: home %q, resume %q", s.HomeRunID, s.ResumeSession)
	}
	if w := rec.events("warning"); len(w) != 1 || !strings.Contains(str(fld(w[0], "message")), "fresh context") {
		t.Errorf("warnings %v, want one saying the revision starts a fresh context", w)
	}
}

// What a kept session id may be: it becomes an argument of the CLI.
func TestValidSessionID(t *testing.T) {
	long := strings.Repeat("a", 128)
	for id, want := range map[string]bool{
		"0b7c3a2e-5d1f-4c8e-9a6b-2f4e8d1c7a90": true, "thread_01:abc.def-9": true, long: true,
		"": false, long + "a": false, "-x": false, ".x": false, "a b": false, "a/b": false, "a\nb": false, "é": false,
	} {
		if got := validSessionID(id); got != want {
			t.Errorf("validSessionID(%q) = %v, want %v", id, got, want)
		}
	}
}
