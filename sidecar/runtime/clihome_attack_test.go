//go:build linux

package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// stubCLI writes a stand-in for a CLI: a script that runs $ATTACK (as the CLI's shell tool
// would for a hostile model) and prints the CLI's last line of a successful turn.
func stubCLI(t *testing.T, dir, result string) string {
	t.Helper()
	p := filepath.Join(dir, "cli")
	script := "#!/bin/sh\ncat >/dev/null\nsh -c \"$ATTACK\" >&2\necho '" + result + "'\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

const claudeResult = `{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"5e0c1a4e-8d2b-4c39-9f0e-6f1d2b7a9c11"}`

// An agent leaves its private CLI home as the sidecar must not trust it: settings.json a link
// to the workspace's package.json, a watched file a sparse terabyte, a FIFO among its hooks,
// CLAUDE.md a link out. The sidecar reads the home at the end of the turn and seeds it at the
// start of the next: nothing hangs, nothing is read whole, and package.json keeps its bytes
// (before, it was rewritten with the seeded settings). As root and as nobody.
func TestCLIHomeAttackNotFollowed(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		ws, home, bin := t.TempDir(), t.TempDir(), t.TempDir()
		pkg := filepath.Join(ws, "package.json")
		const pkgText = `{"name": "the-person's"}` + "\n"
		must(t, os.WriteFile(pkg, []byte(pkgText), 0o644))
		// The user's settings keep a provider variable, so seeding rewrites settings.json.
		must(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o700))
		must(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}}`), 0o600))
		run := "run_" + strings.ReplaceAll(t.Name(), "/", "_")
		t.Cleanup(func() { RemoveTemp(run) })
		s := Spec{RunID: run, AgentID: "a", Role: "orchestrator", BackendID: BackendClaude, Executable: stubCLI(t, bin, claudeResult),
			Workspace: ws, Confine: confine.ModeRequired, Env: map[string]string{"HOME": home, "ANTHROPIC_API_KEY": "sk-test-key-123", "ATTACK": strings.Join([]string{
				`cd "$CLAUDE_CONFIG_DIR"`,
				`rm -f settings.json && ln -s ` + pkg + ` settings.json`,
				`truncate -s 1T settings.local.json`,
				`mkdir -p hooks && mkfifo hooks/fifo`,
				`ln -s ` + pkg + ` CLAUDE.md`,
				`echo ATTACKED`,
			}, "; ")}}
		evs, res := drain(t, start(t, s, "hi"), nil)
		if res.Status != StatusCompleted {
			t.Fatalf("turn 1: %s: %s", res.Status, res.Reason)
		}
		if !strings.Contains(stderrText(evs), "ATTACKED") {
			t.Fatalf("the attack did not run:\n%s", stderrText(evs))
		}
		// The next turn's seeding meets the link: it refuses the home, and writes nothing.
		if p, err := Start(t.Context(), s, "again"); err == nil {
			drain(t, p, nil)
		} else if !strings.Contains(err.Error(), "settings.json") {
			t.Errorf("turn 2 refused for another reason: %v", err)
		}
		if b, _ := os.ReadFile(pkg); string(b) != pkgText {
			t.Errorf("package.json was written through the agent's link: %q", b)
		}
	})
}

// An agent makes its private Gemini home's .gemini folder a link to the person's own
// ~/.gemini: when the run ends, the login the sidecar copied into the private home is
// removed by its name inside the home, so the person's own login stays.
func TestCopiedLoginRemovalStaysInTheHome(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		ws, home, bin := t.TempDir(), t.TempDir(), t.TempDir()
		login := filepath.Join(home, ".gemini", "oauth_creds.json")
		must(t, os.MkdirAll(filepath.Dir(login), 0o700))
		must(t, os.WriteFile(login, []byte(`{"access_token": "the person's"}`), 0o600))
		run := "run_" + strings.ReplaceAll(t.Name(), "/", "_")
		s := Spec{RunID: run, AgentID: "g", Role: "orchestrator", BackendID: BackendGemini, Executable: stubCLI(t, bin, `{"type":"result","status":"success"}`),
			Workspace: ws, Confine: confine.ModeRequired, GeminiApprovalMode: "yolo", Env: map[string]string{"HOME": home,
				"ATTACK": `cd "$GEMINI_CLI_HOME" && rm -rf .gemini && ln -s "$HOME/.gemini" .gemini && echo ATTACKED`}}
		evs, _ := drain(t, start(t, s, "hi"), nil)
		if !strings.Contains(stderrText(evs), "ATTACKED") {
			t.Fatalf("the attack did not run:\n%s", stderrText(evs))
		}
		RemoveTemp(run)
		if _, err := os.Stat(login); err != nil {
			t.Errorf("the person's own login went with the run's copy: %v", err)
		}
	})
}

func stderrText(evs []Event) string {
	var b strings.Builder
	for _, e := range ofKind(evs, EventStderr) {
		b.WriteString(e.Text + "\n")
	}
	return b.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
