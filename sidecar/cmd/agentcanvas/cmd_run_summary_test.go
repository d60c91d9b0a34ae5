package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --summary FILE writes the run's Markdown summary; in a GitHub Actions step it is appended
// to $GITHUB_STEP_SUMMARY without the flag; a refused flow's summary says why.
func TestRunSummary(t *testing.T) {
	ws, file := runWorkspace(t, "manager-worker.yaml")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	out := filepath.Join(t.TempDir(), "summary.md")
	code, stdout, errs := runCLI(t, "run", "--dry-run", "--non-interactive", "--summary", out, "--workspace", ws, file)
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## ✅ AgentCanvas: `manager-worker` completed", "dry run (no model was called)", "| `build` | manager_worker | ✅ completed | quality_gate | 1 |", "| `coder` | `dry-run-coder.md` | added | 5 | 0 | pending review |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary lacks %q:\n%s", want, b)
		}
	}
	if !strings.Contains(stdout, "summary:   "+out) {
		t.Errorf("the view does not say where the summary is:\n%s", stdout)
	}

	step := filepath.Join(t.TempDir(), "step_summary")
	os.WriteFile(step, []byte("## an earlier step\n"), 0o644)
	t.Setenv("GITHUB_STEP_SUMMARY", step)
	if code, _, errs := runCLI(t, "run", "--json", "--dry-run", "--non-interactive", "--workspace", ws, file); code != exitOK {
		t.Fatalf("exit %d %s", code, errs)
	}
	b, _ = os.ReadFile(step)
	if !strings.HasPrefix(string(b), "## an earlier step\n## ✅ AgentCanvas: `manager-worker` completed") {
		t.Errorf("$GITHUB_STEP_SUMMARY was not appended to:\n%s", b)
	}

	bad := filepath.Join(ws, "flows", "bad.yaml")
	os.WriteFile(bad, []byte("version: 0.2\nagents:\n  - {id: a}\ninteractions:\n  - id: i1\n    patternId: role_play_pair\n    edges:\n      - {source: a, target: ghost}\n"), 0o644)
	if code, _, _ := runCLI(t, "run", "--dry-run", "--summary", out, "--workspace", ws, bad); code != exitFail {
		t.Fatalf("invalid flow: exit %d", code)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "refused") || !strings.Contains(string(b), "unknown-agent") {
		t.Errorf("refused run's summary:\n%s", b)
	}

	// A summary that cannot be written is an I/O error, said on stderr; the run still ran.
	code, _, errs = runCLI(t, "run", "--dry-run", "--non-interactive", "--summary", filepath.Join(ws, "no", "such", "dir", "s.md"), "--workspace", ws, file)
	if code != exitUsage || !strings.Contains(errs, "the summary was not written") {
		t.Errorf("unwritable summary: exit %d %s", code, errs)
	}
}
