package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A runtime.env name that is not set is said once per agent (not every round): the agent runs
// without it. A key variable whose CLI has no login says the model calls will fail; with a
// login, or for a base-URL variable (unset: the provider's own API), nothing is said.
func TestUnsetRuntimeEnvIsWarnedAbout(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"MY_UNSET_VAR", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR"} {
		os.Unsetenv(k)
	}
	t.Setenv("MY_EMPTY_VAR", "")
	rt := "runtime: {backendId: command, command: [echo, ok], env: [MY_UNSET_VAR, MY_EMPTY_VAR, HOME, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL]}"
	warnings := func() []string {
		ws, f := workspace(t, pairFlow("", rt, "runtime: {backendId: dry-run}", 2))
		if _, err := Run(context.Background(), f, Options{Workspace: ws, Limits: recording}); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range events(t, ws, f.Name) {
			var m string
			if raw, ok := ev.Fields["message"].(json.RawMessage); ok && ev.Event == "warning" {
				json.Unmarshal(raw, &m)
			}
			if strings.Contains(m, "runtime.env") {
				out = append(out, m)
			}
		}
		return out
	}
	got := warnings()
	want := []string{
		"runtime.env of a names MY_UNSET_VAR, which is not set: the agent runs without it",
		"runtime.env of a names MY_EMPTY_VAR, which is not set: the agent runs without it",
		"runtime.env of a names ANTHROPIC_API_KEY, which is not set, and claude has no login: its model calls will fail (set ANTHROPIC_API_KEY, or log in: claude",
	}
	if len(got) != len(want) {
		t.Fatalf("warnings:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %d: %q, want %q…", i, got[i], want[i])
		}
	}
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(`{"claudeAiOauth":{}}`), 0o600)
	if got := warnings(); len(got) != 2 || strings.Contains(strings.Join(got, "\n"), "ANTHROPIC") {
		t.Errorf("with a claude login:\n%s", strings.Join(got, "\n"))
	}
}
