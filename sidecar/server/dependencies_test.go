package server

import (
	"testing"
)

// checkDependencyValue answers with the engine's own rules: the key the extension's old
// regex took (sk-proj.abc:defgh12) is refused with the spec's reason, a valid one taken.
func TestCheckDependencyValueUsesTheEnginesRules(t *testing.T) {
	root, _ := workspace(t, "team.yaml", goodFlow)
	c, _ := startInProcess(t, Options{})
	c.initialize(root)
	for _, tc := range []struct{ typ, value, want string }{
		{"api_key", "sk-proj.abc:defgh12", "Invalid API key format"},
		{"api_key", "sk-proj-abcdefgh12", ""},
		{"service", "ftp://x", "Only HTTP(S) protocols allowed"},
		{"package", "pypi:requests", ""},
		{"file", "../x", "Path traversal detected"},
	} {
		var res CheckDependencyResult
		c.mustCall("agentcanvas/checkDependencyValue", map[string]any{"type": tc.typ, "value": tc.value}, &res)
		if res.Error != tc.want || res.Valid != (tc.want == "") {
			t.Errorf("%s %q: %+v, want %q", tc.typ, tc.value, res, tc.want)
		}
	}
	if _, err := c.call("agentcanvas/checkDependencyValue", map[string]any{"value": "x"}); err == nil || err.Code != -32602 {
		t.Errorf("without a type: %v", err)
	}
}
