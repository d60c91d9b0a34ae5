package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A typo in a field's name stops the run before any agent starts: `backendid` for
// `backendId` would otherwise have the agent fall back to auto, ignore its command and
// start another CLI. The error names the file, the line and the field it may have meant.
func TestUnknownFieldStopsTheRunBeforeAnyAgent(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "agent-ran")
	os.MkdirAll(filepath.Join(ws, "flows"), 0o755)
	file := filepath.Join(ws, "flows", "typo.yaml")
	os.WriteFile(file, []byte(`version: 0.2
name: typo
agents:
  - {id: lead, role: orchestrator, runtime: {backendId: command, command: [touch, `+marker+`]}}
  - {id: w, role: worker, runtime: {backendid: command, command: [touch, `+marker+`]}}
interactions:
  - id: i
    patternID: manager_worker
    patternId: manager_worker
    edges: [{source: lead, target: w, data: {termination: {type: max_rounds, rounds: 1}}}]
`), 0o644)
	code, out, e := runCmd(t, "run", "--non-interactive", "--confine", "off", file)
	for _, want := range []string{
		file + `:5:37: error: schema: unknown field "backendid" in runtime (did you mean "backendId"?); correct or remove it`,
		file + `:8:5: error: schema: unknown field "patternID" in an interaction (did you mean "patternId"?); correct or remove it`,
	} {
		if !strings.Contains(e, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if code != exitFail || out != "" {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, e)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("an agent ran")
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", "runs")); err == nil {
		t.Error("a run was recorded")
	}
}

// Every warning `validate` gives for a flow, `run` prints too (as warning events), word
// for word.
func TestRunPrintsEveryValidationWarning(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "flows"), 0o755)
	file := filepath.Join(ws, "flows", "warn.yaml")
	os.WriteFile(file, []byte(`version: 0.2
name: warn
policy: {budget: {usd: 5}}
agents:
  - {id: lead, role: orchestrator, runtime: {backendId: dry-run}}
  - {id: w, role: worker, runtime: {backendId: command, command: [echo, hi], env: [HOME, HOME]}}
interactions:
  - id: i
    patternId: manager_worker
    edges: [{source: lead, target: w, data: {termination: {type: max_rounds, rounds: 1}}}]
`), 0o644)
	_, v, _ := runCmd(t, "validate", file)
	var warnings []string
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, ": warning: ") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) < 2 {
		t.Fatalf("the flow should have two warnings or more:\n%s", v)
	}
	_, out, e := runCmd(t, "run", "--json", "--dry-run", "--non-interactive", file)
	for _, w := range warnings {
		found := false
		for _, l := range strings.Split(out, "\n") {
			found = found || strings.Contains(l, `"event":"warning"`) && strings.Contains(l, `"message":`+jsonString(w))
		}
		if !found {
			t.Errorf("run does not print %q\n%s\n%s", w, out, e)
		}
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
