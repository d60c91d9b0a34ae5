package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// depAgent prints block in its first turn; in its second it records $NAME (the value of a
// secret dependency) and its prompt in dir, and answers.
func depAgent(t *testing.T, dir, name, block string) string {
	return script(t, dir, "agent.sh", `prompt=$(cat)
case "$AGENTCANVAS_TURN" in
1) printf '`+block+`';;
*) printf '%s' "$`+name+`" > "`+dir+`/value"; printf '%s' "$prompt" > "`+dir+`/prompt2"; echo "ANSWER: done";;
esac
`)
}

func depRun(t *testing.T, flowYAML, agent string, o Options) (*Outcome, []eventlog.Event) {
	t.Helper()
	ws, f := workspace(t, strings.ReplaceAll(flowYAML, "AGENT", agent))
	o.Workspace, o.Limits = ws, recording
	out, err := Run(context.Background(), f, o)
	if err != nil {
		t.Fatal(err)
	}
	return out, events(t, ws, f.Name)
}

const shortKeyBlock = `[DEPENDENCY_REQUEST]\ntype: api_key\nname: SHORT_KEY\ndescription: the key of the test service\nrequired: true\n[/DEPENDENCY_REQUEST]\n`

// dependency-request-handling.md: an invalid value is reported, not delivered. An answers
// file's value is not given twice: the required dependency is rejected and the agent fails,
// at once, instead of the run waiting for the hour's timeout.
func TestInvalidDependencyValueFromAnswersIsRefused(t *testing.T) {
	dir := t.TempDir()
	out, evs := depRun(t, oneAgentFlow, depAgent(t, dir, "SHORT_KEY", shortKeyBlock), Options{Human: NonInteractive{Answers: map[string]string{"SHORT_KEY": "abc"}}})
	inv := eventsNamed(evs, "dependency_invalid")
	if len(inv) != 1 || !strings.Contains(str(fld(inv[0], "error")), "Invalid API key format") && !strings.Contains(str(fld(inv[0], "error")), "too short") {
		t.Fatalf("dependency_invalid %v", inv)
	}
	res := eventsNamed(evs, "dependency_resolved")
	if len(res) != 1 || fld(res[0], "outcome") != "rejected" || !strings.Contains(str(fld(res[0], "reason")), "refused") {
		t.Fatalf("dependency_resolved %v", res)
	}
	if out.Status != StatusFailed || !strings.Contains(out.Reason, "required dependency rejected: SHORT_KEY") {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	if _, err := os.Stat(filepath.Join(dir, "value")); err == nil {
		t.Fatal("the agent ran on after a refused value")
	}
	for _, e := range evs {
		for _, v := range e.Fields {
			if b, _ := json.Marshal(v); strings.Contains(string(b), `"abc"`) {
				t.Fatalf("the refused value is in the log: %s %v", e.Event, e.Fields)
			}
		}
	}
}

// At the prompt, a refused value is said and asked for again; the next valid one is
// delivered. The prompt shows the request's description, and the phase prompt its number.
func TestInvalidDependencyValueAtThePromptIsAskedAgain(t *testing.T) {
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `cat >/dev/null
case "$AGENTCANVAS_TURN" in
1) printf '`+shortKeyBlock+`';;
*) printf '%s' "$SHORT_KEY" > "`+dir+`/value"; echo "=== PHASE 2 COMPLETE ==="; echo "ANSWER: done";;
esac
`)
	var shown strings.Builder
	term := &Terminal{R: strings.NewReader("abc\nhttp://x\nkey-12345678\ny\n"), W: &shown}
	out, evs := depRun(t, oneAgentFlow, agent, Options{Human: term})
	if out.Status != StatusCompleted {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	if n := len(eventsNamed(evs, "dependency_invalid")); n != 2 {
		t.Errorf("%d dependency_invalid events, want 2", n)
	}
	if res := eventsNamed(evs, "dependency_resolved"); len(res) != 1 || fld(res[0], "outcome") != "provided" {
		t.Fatalf("dependency_resolved %v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "value")); string(b) != "key-12345678" {
		t.Errorf("the agent got %q", b)
	}
	s := shown.String()
	for _, want := range []string{`needs api_key "SHORT_KEY": the key of the test service`, "refused: API key too short", "refused: Invalid API key format", "completed phase 2. Continue?"} {
		if !strings.Contains(s, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, s)
		}
	}
}

const optionalBlock = `[DEPENDENCY_REQUEST]\ntype: file\nname: CONFIG_PATH\ndescription: where the config is\nrequired: false\ndefault: config/default.yaml\n[/DEPENDENCY_REQUEST]\n`

// An optional dependency rejected (here: a non-interactive run with no value) goes on with
// the request's default, and the log says so.
func TestOptionalDependencyRejectedTakesItsDefault(t *testing.T) {
	dir := t.TempDir()
	out, evs := depRun(t, oneAgentFlow, depAgent(t, dir, "CONFIG_PATH", optionalBlock), Options{Human: NonInteractive{}})
	if out.Status != StatusCompleted {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	res := eventsNamed(evs, "dependency_resolved")
	if len(res) != 1 || fld(res[0], "outcome") != "rejected" || !strings.Contains(str(fld(res[0], "then")), "default") {
		t.Fatalf("dependency_resolved %v", res)
	}
	if p, _ := os.ReadFile(filepath.Join(dir, "prompt2")); !strings.Contains(string(p), "value: config/default.yaml") {
		t.Errorf("the agent was not given the default:\n%s", p)
	}
}

// An optional dependency nobody answers times out after the flow's
// policy.dependencyTimeoutMs, goes on with its default, and is logged as a timeout.
func TestOptionalDependencyTimesOutWithItsDefault(t *testing.T) {
	dir := t.TempDir()
	r, w, err := os.Pipe() // a terminal nobody types at
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	flowYAML := strings.Replace(oneAgentFlow, "version: 0.2\n", "version: 0.2\npolicy: {dependencyTimeoutMs: 300}\n", 1)
	out, evs := depRun(t, flowYAML, depAgent(t, dir, "CONFIG_PATH", optionalBlock), Options{Human: &Terminal{R: r, W: &strings.Builder{}}})
	if out.Status != StatusCompleted {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	res := eventsNamed(evs, "dependency_resolved")
	if len(res) != 1 || fld(res[0], "outcome") != "timeout" || !strings.Contains(str(fld(res[0], "then")), "default") {
		t.Fatalf("dependency_resolved %v", res)
	}
	if p, _ := os.ReadFile(filepath.Join(dir, "prompt2")); !strings.Contains(string(p), "value: config/default.yaml") {
		t.Errorf("the agent was not given the default:\n%s", p)
	}
}

// In the editor (the server's Inbox), an invalid value is refused to whoever gave it, at
// once, naming why; the request stays pending and takes a valid value after.
func TestInvalidDependencyValueFromTheEditorIsRefused(t *testing.T) {
	dir := t.TempDir()
	ws, f := workspace(t, strings.ReplaceAll(oneAgentFlow, "AGENT", depAgent(t, dir, "SHORT_KEY", shortKeyBlock)))
	m := &Manager{Limits: recording, Workspace: ws}
	var refusal, second error
	m.Event = func(ev eventlog.Event) {
		if ev.Event != "dependency_requested" {
			return
		}
		id, _ := ev.Fields["id"].(string)
		refusal = m.Provide(ev.RunID, id, "abc")
		second = m.Provide(ev.RunID, id, "key-12345678")
	}
	info, err := m.Start(f, StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := m.Wait(info.RunID)
	if refusal == nil || !strings.Contains(refusal.Error(), "API key too short") || !strings.Contains(refusal.Error(), "still pending") {
		t.Errorf("the invalid value was answered with %v", refusal)
	}
	if second != nil || out.Status != StatusCompleted {
		t.Fatalf("the valid value: %v; run %s (%s)", second, out.Status, out.Reason)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "value")); string(b) != "key-12345678" {
		t.Errorf("the agent got %q", b)
	}
}

// Every type's check holds in a run: each bad value is reported with the spec's reason, not
// delivered, and the run ends (the required dependency rejected) instead of waiting.
func TestEveryInvalidDependencyTypeIsRefused(t *testing.T) {
	for _, c := range []struct{ typ, name, value, reason string }{
		{"service", "THING", "ftp://example.com", "Only HTTP(S) protocols allowed"},
		{"service", "THING", "not a url", "Invalid URL format"},
		{"file", "THING", "../../etc/passwd", "Path traversal detected"},
		{"permission", "THING", "maybe", "Permission must be true/false or yes/no"},
		{"package", "left-pad", "Bad Package!", "Invalid package name format"}, // a package request names the package
		{"env_variable", "THING", strings.Repeat("x", 10001), "Environment variable too long"},
	} {
		t.Run(c.typ+" "+c.reason, func(t *testing.T) {
			dir := t.TempDir()
			block := `[DEPENDENCY_REQUEST]\ntype: ` + c.typ + `\nname: ` + c.name + `\ndescription: a thing\nrequired: true\n[/DEPENDENCY_REQUEST]\n`
			out, evs := depRun(t, oneAgentFlow, depAgent(t, dir, "THING", block), Options{Human: NonInteractive{Answers: map[string]string{c.name: c.value}}})
			inv := eventsNamed(evs, "dependency_invalid")
			if len(inv) != 1 || !strings.Contains(str(fld(inv[0], "error")), c.reason) {
				t.Fatalf("dependency_invalid %v", inv)
			}
			if out.Status != StatusFailed {
				t.Errorf("run %s", out.Status)
			}
			if _, err := os.Stat(filepath.Join(dir, "value")); err == nil {
				t.Error("the agent went on with a refused value")
			}
		})
	}
}

// One dependency engine for the terminal, the editor and an answers file: the same check
// (the extension's own regex took sk-proj.abc:defgh12, which the sidecar refuses), the same
// dependency_invalid events, and the third refused value rejects the request — in the editor
// too, where a refused value used to leave the request pending until its hour was up.
func TestThreeRefusalsRejectEverywhere(t *testing.T) {
	bad := []string{"sk-proj.abc:defgh12", "short", "has space in it"}
	check := func(t *testing.T, out *Outcome, evs []eventlog.Event) {
		t.Helper()
		inv := eventsNamed(evs, "dependency_invalid")
		if len(inv) != 3 || !strings.Contains(str(fld(inv[0], "error")), "Invalid API key format") || fld(inv[2], "attempt") != float64(3) {
			t.Fatalf("dependency_invalid %v", inv)
		}
		res := eventsNamed(evs, "dependency_resolved")
		if len(res) != 1 || fld(res[0], "outcome") != "rejected" || !strings.Contains(str(fld(res[0], "reason")), "after 3 refused values") {
			t.Fatalf("dependency_resolved %v", res)
		}
		if out.Status != StatusFailed || !strings.Contains(out.Reason, "required dependency rejected: SHORT_KEY") {
			t.Fatalf("run %s: %s", out.Status, out.Reason)
		}
	}
	t.Run("terminal", func(t *testing.T) {
		dir := t.TempDir()
		term := &Terminal{R: strings.NewReader(strings.Join(bad, "\n") + "\nkey-12345678\n"), W: &strings.Builder{}}
		out, evs := depRun(t, oneAgentFlow, depAgent(t, dir, "SHORT_KEY", shortKeyBlock), Options{Human: term})
		check(t, out, evs)
	})
	t.Run("editor", func(t *testing.T) {
		dir := t.TempDir()
		ws, f := workspace(t, strings.ReplaceAll(oneAgentFlow, "AGENT", depAgent(t, dir, "SHORT_KEY", shortKeyBlock)))
		m := &Manager{Limits: recording, Workspace: ws}
		var errs []error
		m.Event = func(ev eventlog.Event) {
			if ev.Event == "dependency_requested" {
				id, _ := ev.Fields["id"].(string)
				for _, v := range bad {
					errs = append(errs, m.Provide(ev.RunID, id, v))
				}
			}
		}
		info, err := m.Start(f, StartParams{})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := m.Wait(info.RunID)
		check(t, out, events(t, ws, f.Name))
		if len(errs) != 3 || errs[0] == nil || !strings.Contains(errs[0].Error(), "still pending (1 of 3") || errs[2] == nil || !strings.Contains(errs[2].Error(), "request is rejected") {
			t.Errorf("the editor was told %v", errs)
		}
	})
}
