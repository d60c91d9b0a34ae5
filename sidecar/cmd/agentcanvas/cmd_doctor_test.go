package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// doctor FLOW checks the CLIs the flow's agents use: a claude flow without claude on PATH is
// not ready (exit 1) and says how to install it; a dry-run flow needs none (exit 0).
func TestDoctorChecksTheFlowsCLIs(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	os.Symlink(git, filepath.Join(bin, "git"))
	t.Setenv("PATH", bin)
	t.Setenv("HOME", t.TempDir())
	root := writeFlows(t, map[string]string{
		"flows/claude.yaml": "version: 0.2\nname: c\nagents:\n  - {id: a, role: worker, runtime: {backendId: claude}}\ninteractions: []\n",
		"flows/dry.yaml":    "version: 0.2\nname: d\nagents:\n  - {id: a, role: worker, runtime: {backendId: dry-run}}\ninteractions: []\n",
	})
	code, out, _ := runCmd(t, "doctor", filepath.Join(root, "flows", "claude.yaml"))
	if code != exitFail || !strings.Contains(out, "✗ claude") || !strings.Contains(out, "fix: npm install -g @anthropic-ai/claude-code@2.1.330") || strings.Contains(out, "codex") {
		t.Errorf("claude flow: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "doctor", "--json", filepath.Join(root, "flows", "dry.yaml"))
	var rep struct {
		Checks []map[string]string `json:"checks"`
		Ready  bool                `json:"ready"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || !rep.Ready || len(rep.Checks) != 2 {
		t.Errorf("dry-run flow: exit %d\n%s", code, out)
	}
	if code, _, e := runCmd(t, "doctor", "--backend", "cursor"); code != exitUsage || !strings.Contains(e, `"cursor"`) {
		t.Errorf("unknown backend: exit %d %q", code, e)
	}
}
