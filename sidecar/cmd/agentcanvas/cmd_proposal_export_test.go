package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs git in dir with a fixed identity, failing the test on an error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=ci", "GIT_AUTHOR_EMAIL=ci@example.com", "GIT_COMMITTER_NAME=ci", "GIT_COMMITTER_EMAIL=ci@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// cliProposal makes a proposal of agent in run r1 with the commands a script would use:
// sandbox prepare, an edit in work/, proposal create.
func cliProposal(t *testing.T, ws, agent, file, content string) {
	t.Helper()
	code, out, errs := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", agent, file)
	if code != exitOK {
		t.Fatalf("prepare: %s", errs)
	}
	var paths map[string]string
	json.Unmarshal([]byte(out), &paths)
	os.WriteFile(filepath.Join(paths["workDir"], file), []byte(content), 0o644)
	if code, _, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", agent, "--notes", "edit by "+agent); code != exitOK {
		t.Fatalf("create: %s", errs)
	}
}

// proposal export: --out gets a patch `git am` commits; two proposals that change the same
// lines are refused with exit 1, naming both agents and the file, and nothing is written.
func TestProposalExportCommand(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".gitignore"), []byte(".agentcanvas/\n"), 0o644)
	git(t, ws, "init", "-q")
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-q", "-m", "base")
	cliProposal(t, ws, "first", "a.txt", "one\n2\n3\n4\n5\n6\n7\n8\n9\n")
	cliProposal(t, ws, "second", "a.txt", "1\n2\n3\n4\n5\n6\n7\n8\nnine\n")

	out := filepath.Join(t.TempDir(), "r1.patch")
	code, stdout, errs := runCLI(t, "proposal", "export", "--workspace", ws, "--out", out, "r1")
	if code != exitOK || stdout != "" || !strings.Contains(errs, "exported: first (1 file(s), +1 -1)") {
		t.Fatalf("export: %d %q %s", code, stdout, errs)
	}
	clone := t.TempDir()
	git(t, clone, "clone", "-q", ws, ".")
	git(t, clone, "am", "-q", out)
	if b, _ := os.ReadFile(filepath.Join(clone, "a.txt")); string(b) != "one\n2\n3\n4\n5\n6\n7\n8\nnine\n" {
		t.Errorf("after git am: %q", b)
	}
	if log := git(t, clone, "log", "--format=%an|%s", "-2"); log != "second (AgentCanvas)|second: edit by second\nfirst (AgentCanvas)|first: edit by first\n" {
		t.Errorf("git log:\n%s", log)
	}
	// To stdout, for one agent.
	code, stdout, _ = runCLI(t, "proposal", "export", "--workspace", ws, "r1", "second")
	if code != exitOK || !strings.HasPrefix(stdout, "From 0000000000000000000000000000000000000000 ") || strings.Contains(stdout, "first") {
		t.Errorf("export of second to stdout: %d\n%s", code, stdout)
	}

	cliProposal(t, ws, "third", "a.txt", "1\n2\n3\n4\n5\n6\n7\nEIGHT\n9\n")
	os.Remove(out)
	code, stdout, errs = runCLI(t, "proposal", "export", "--workspace", ws, "--out", out, "r1")
	if code != exitFail || stdout != "" || !strings.Contains(errs, "second and third: a.txt: both change the same or adjacent lines (line 9 and line 8)") || !strings.Contains(errs, "nothing was written") {
		t.Errorf("conflict: %d %s", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused export wrote its --out file")
	}
	if code, _, _ := runCLI(t, "proposal", "export", "--workspace", ws); code != exitUsage {
		t.Errorf("no run id: exit %d", code)
	}
	if code, _, errs := runCLI(t, "proposal", "export", "--workspace", ws, "r2"); code != exitFail || !strings.Contains(errs, "run r2 has no proposals") {
		t.Errorf("unknown run: %d %s", code, errs)
	}
}
