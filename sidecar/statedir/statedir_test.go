package statedir_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/statedir"
)

// The first write to a workspace (here the event log's) makes .agentcanvas/ with its own
// .gitignore: real git then sees none of the run state, but still the person's flows and
// skills; the repository's own files are not edited. An existing folder is left alone.
func TestANewStateFolderStaysOutOfGit(t *testing.T) {
	ws := t.TempDir()
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Skipf("git: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)
	l, err := eventlog.Open(ws, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(eventlog.Event{Event: "run_started"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	for _, p := range []string{"sandboxes/run_1/a/work/x.txt", "runs/run_1/turns.jsonl", "memory/MEMORY.md", "flows/team.yaml", "skills/notes/SKILL.md", "flows/sub/deep.yaml"} {
		full := filepath.Join(ws, ".agentcanvas", p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte("x\n"), 0o644)
	}
	out, err := exec.Command("git", "-C", ws, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(strings.ReplaceAll(string(out), "??", ""))
	want := []string{".agentcanvas/flows/sub/deep.yaml", ".agentcanvas/flows/team.yaml", ".agentcanvas/skills/notes/SKILL.md", "main.go"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("git status shows %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(ws, ".gitignore")); err == nil {
		t.Error("the repository's own .gitignore was written")
	}
	// An existing folder whose .gitignore was removed on purpose is left so.
	os.Remove(filepath.Join(ws, ".agentcanvas", ".gitignore"))
	if err := statedir.EnsureAt(ws); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", ".gitignore")); err == nil {
		t.Error("a removed .gitignore came back")
	}
}
