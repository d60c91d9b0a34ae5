package server

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/engine"
)

// The editor's agentcanvas.* settings, on the real binary: initializationOptions at start,
// workspace/didChangeConfiguration after, as vscode-languageclient sends them.

// settingsFlow is goodFlow with the worker given a file outside src/.
var settingsFlow = strings.Replace(goodFlow, "    role: worker\n", "    role: worker\n    files: [lib/b.txt]\n", 1)

// configure sends workspace/didChangeConfiguration with the agentcanvas section.
func (c *client) configure(section map[string]any) {
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agentcanvas": section}})
}

// problems are a -32803 refusal's problems (applyProposal's data).
func problems(t *testing.T, err *rpcError) []struct{ Path, Reason string } {
	t.Helper()
	var data struct {
		Problems []struct{ Path, Reason string }
	}
	if err == nil || err.Code != int(CodeRequestFailed) || json.Unmarshal(err.Data, &data) != nil {
		t.Fatalf("want a refusal with problems, got %v", err)
	}
	return data.Problems
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFolderSettings(t *testing.T) {
	root, uri := workspace(t, "team.yaml", settingsFlow)
	writeFiles(t, root, map[string]string{"src/a.txt": "a\n", "src/gen/g.txt": "g\n", "lib/b.txt": "b\n"})
	c := startBinary(t)
	c.initializeWith(root, map[string]any{"allowedFolders": []string{"src"}, "blockedFolders": []string{"src/gen"}, "autoApply": "off"})
	c.waitNote("agentcanvas/status", nil)

	// Sandboxes: a file outside the allowed folders or in a blocked one is refused by name and
	// rule before anything is created.
	for file, rule := range map[string]string{
		"lib/b.txt":     "lib/b.txt: outside the allowed folders [src] (agentcanvas.allowedFolders)",
		"src/gen/g.txt": "src/gen/g.txt: in the blocked folder src/gen (agentcanvas.blockedFolders)",
	} {
		_, err := c.call("agentcanvas/prepareSandbox", map[string]any{"runId": "r0", "agentId": "w", "files": []string{file}})
		if err == nil || err.Code != int(CodeRequestFailed) || !strings.Contains(err.Message, rule) {
			t.Errorf("prepareSandbox %s: %v; want %q", file, err, rule)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".agentcanvas", "sandboxes")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused prepare created something: %v", err)
	}

	// Validation: the agent's files entry outside the allowed folders, naming the setting.
	c.open(uri, settingsFlow, 1)
	ds := c.diagnostics(uri, 1)
	if len(ds) != 1 || ds[0].Code != "unsafe-path" || !strings.Contains(ds[0].Message, `agent file "lib/b.txt" is refused: outside the allowed folders [src] (agentcanvas.allowedFolders)`) || ds[0].Data == nil || ds[0].Data.Path != "/agents/1/files/0" {
		t.Errorf("diagnostics: %+v", ds)
	}

	// Proposals: a worker in src/ that also writes lib/new.txt; apply refuses by file and rule.
	var paths struct{ WorkDir string }
	c.mustCall("agentcanvas/prepareSandbox", map[string]any{"runId": "r1", "agentId": "w1", "files": []string{"src/a.txt"}}, &paths)
	writeFiles(t, paths.WorkDir, map[string]string{"src/a.txt": "A\n", "lib/new.txt": "new\n"})
	c.mustCall("agentcanvas/createProposal", map[string]any{"runId": "r1", "agentId": "w1"}, nil)
	ref := map[string]any{"runId": "r1", "agentId": "w1"}
	_, err := c.call("agentcanvas/applyProposal", ref)
	if ps := problems(t, err); len(ps) != 1 || ps[0].Path != "lib/new.txt" || ps[0].Reason != "outside the allowed folders [src] (agentcanvas.allowedFolders)" ||
		!strings.Contains(err.Message, "lib/new.txt: outside the allowed folders [src] (agentcanvas.allowedFolders)") {
		t.Errorf("applyProposal: %v", err)
	}
	var review struct {
		Applicable bool
		Problems   []struct{ Path, Reason string }
	}
	c.mustCall("agentcanvas/getProposal", ref, &review)
	if review.Applicable || len(review.Problems) != 1 || review.Problems[0].Path != "lib/new.txt" {
		t.Errorf("getProposal: %+v", review)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "src", "a.txt")); string(b) != "a\n" {
		t.Fatal("a refused apply changed the workspace")
	}
	if _, err := os.Stat(filepath.Join(root, "lib", "new.txt")); err == nil {
		t.Fatal("a refused apply created lib/new.txt")
	}

	// The settings change: the same document is diagnosed again, and apply goes through.
	c.configure(map[string]any{"allowedFolders": []string{"src", "lib"}, "blockedFolders": []string{}, "autoApply": "off",
		"sidecarPath": "", "trace": map[string]any{"server": "off"}})
	if ds := c.diagnostics(uri, 1); len(ds) != 0 {
		t.Errorf("diagnostics after the change: %+v", ds)
	}
	var res struct{ Applied bool }
	c.mustCall("agentcanvas/applyProposal", ref, &res)
	if b, _ := os.ReadFile(filepath.Join(root, "lib", "new.txt")); !res.Applied || string(b) != "new\n" {
		t.Errorf("apply after the change: %+v, lib/new.txt %q", res, b)
	}
	c.mustCall("agentcanvas/prepareSandbox", map[string]any{"runId": "r2", "agentId": "w", "files": []string{"src/gen/g.txt"}}, nil)
	c.shutdownExit()
}

// Bad values are reported once, naming the setting, and ignored: the server keeps serving,
// an allow-list with no usable entry allows nothing, a bad autoApply is off.
func TestBadSettings(t *testing.T) {
	root, _ := workspace(t, "team.yaml", settingsFlow)
	writeFiles(t, root, map[string]string{"src/a.txt": "a\n"})
	c := startBinary(t)
	c.initializeWith(root, map[string]any{"allowedFolders": []string{"/etc", "src/../.."}, "blockedFolders": "build", "autoApply": "sometimes"})
	msg := c.waitNote("window/showMessage", nil)
	for _, want := range []string{
		`agentcanvas.allowedFolders \"/etc\": absolute paths are not allowed; use a path relative to the workspace root; the entry is ignored`,
		`agentcanvas.allowedFolders \"src/../..\": '..' is not allowed; the entry is ignored`,
		`agentcanvas.allowedFolders: no entry is usable, so no folder is allowed until it is corrected`,
		`agentcanvas.blockedFolders: want a list of workspace-relative folders, got \"build\"; the setting is ignored`,
		`agentcanvas.autoApply: \"sometimes\" is not one of [off whenClean flow]; nothing is applied automatically until it is corrected`,
		`"type":2`,
	} {
		if !strings.Contains(string(msg), want) {
			t.Errorf("showMessage %s\nwant %s", msg, want)
		}
	}
	_, err := c.call("agentcanvas/prepareSandbox", map[string]any{"runId": "r", "agentId": "w", "files": []string{"src/a.txt"}})
	if err == nil || !strings.Contains(err.Message, "no folder is allowed (agentcanvas.allowedFolders has no usable entry)") {
		t.Errorf("prepare with no usable allowed folder: %v", err)
	}
	// The same problems again (the client's first didChangeConfiguration repeats the
	// initializationOptions) are not shown twice; a correction takes effect.
	c.configure(map[string]any{"allowedFolders": []string{"/etc", "src/../.."}, "blockedFolders": "build", "autoApply": "sometimes"})
	c.configure(map[string]any{"allowedFolders": []string{}})
	c.mustCall("agentcanvas/prepareSandbox", map[string]any{"runId": "r", "agentId": "w", "files": []string{"src/a.txt"}}, nil)
	c.mu.Lock()
	shown := 0
	for _, m := range c.log {
		if m.Method == "window/showMessage" {
			shown++
		}
	}
	c.mu.Unlock()
	if shown != 1 {
		t.Errorf("%d showMessage notifications, want 1", shown)
	}
	c.shutdownExit()
}

// autoApply caps the flow's policy.autoApply for runs started from the editor: off (the
// default) holds a proposal the flow would apply; after a change to flow it is applied.
func TestAutoApplySetting(t *testing.T) {
	script := `cat > /dev/null
if [ "$AGENTCANVAS_AGENT_ID" != b ]; then echo "ANSWER: ok"; exit 0; fi
echo "edit $AGENTCANVAS_RUN_ID" > "out-$AGENTCANVAS_RUN_ID.txt"
cat <<EOH
HANDOFF
Context:        a test
Goal:           one file
DoD:            the file exists
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/b/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/b/proposal/proposal.json
ChangedFiles:
  - out-$AGENTCANVAS_RUN_ID.txt
Tests:
  - (none)
Next:
  - Orchestrator: review
EOH
`
	agent := commandAgent(t, script)
	// b is a worker (a sandbox), and the flow asks for auto-apply.
	text := strings.Replace(strings.Replace(pairFlow, "agents:", "policy: {autoApply: true}\nagents:", 1),
		"{id: b, role: reviewer, runtime: {backendId: command, command: [bash, AGENT]}}",
		"{id: b, role: coder, runtime: {backendId: command, command: [bash, AGENT], cwdMode: agentHome}}", 1)
	root, uri := workspace(t, "apply.yaml", strings.ReplaceAll(text, "AGENT", agent))
	c := startBinary(t)
	c.initialize(root) // no settings: autoApply is off, as the setting's default
	run := func() (runID, outcome string) {
		t.Helper()
		var info struct{ RunID string }
		c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri}, &info)
		ev := c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
			s := string(p)
			return strings.Contains(s, info.RunID) && (strings.Contains(s, `"event":"proposal_held"`) || strings.Contains(s, `"event":"proposal_applied"`))
		})
		c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
			return strings.Contains(string(p), info.RunID) && strings.Contains(string(p), `"event":"run_finished"`)
		})
		return info.RunID, string(ev)
	}
	id, ev := run()
	if !strings.Contains(ev, `"reason":"agentcanvas.autoApply is off"`) {
		t.Errorf("with autoApply off: %s", ev)
	}
	if _, err := os.Stat(filepath.Join(root, "out-"+id+".txt")); err == nil {
		t.Error("applied although autoApply is off")
	}
	c.configure(map[string]any{"autoApply": "flow"})
	id, ev = run()
	if b, err := os.ReadFile(filepath.Join(root, "out-"+id+".txt")); !strings.Contains(ev, `"event":"proposal_applied"`) || string(b) != "edit "+id+"\n" {
		t.Errorf("with autoApply flow: %s; file %q %v", ev, b, err)
	}
	c.shutdownExit()
}

// package.json's contribution and the sidecar agree on autoApply's values and default.
func TestSettingsContributionAgrees(t *testing.T) {
	b, err := os.ReadFile("../../package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			Configuration struct {
				Properties map[string]struct {
					Default any      `json:"default"`
					Enum    []string `json:"enum"`
				} `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	props := pkg.Contributes.Configuration.Properties
	var values []string
	for _, v := range engine.AutoApplyValues {
		values = append(values, string(v))
	}
	if a := props[settingAutoApply]; strings.Join(a.Enum, ",") != strings.Join(values, ",") || a.Default != string(defaultSettings().autoApply) {
		t.Errorf("package.json %s: enum %v default %v; the sidecar takes %v, default %s", settingAutoApply, a.Enum, a.Default, values, defaultSettings().autoApply)
	}
	if g := props[settingGateway]; strings.Join(g.Enum, ",") != strings.Join(engine.GatewayModes, ",") || g.Default != defaultSettings().gateway {
		t.Errorf("package.json %s: enum %v default %v; the sidecar takes %v, default %s", settingGateway, g.Enum, g.Default, engine.GatewayModes, defaultSettings().gateway)
	}
	for _, k := range []string{settingAllowed, settingBlocked, settingPricing} {
		if _, ok := props[k]; !ok {
			t.Errorf("package.json does not contribute %s", k)
		}
	}
}

// agentcanvas.confinement, on a kernel without Landlock (simulated for the server): required
// refuses startRun, naming the setting and why; after a change to auto the run starts and
// warns that its agents run unconfined; a bad value is reported and taken as auto.
func TestConfinementSetting(t *testing.T) {
	t.Setenv(confine.NoLandlockEnv, "1") // the server inherits it
	agent := commandAgent(t, "cat > /dev/null; echo 'ANSWER: ok'\n")
	root, uri := workspace(t, "pair.yaml", strings.ReplaceAll(pairFlow, "AGENT", agent))
	c := startBinary(t)
	c.initializeWith(root, map[string]any{"confinement": "required"})
	_, err := c.call("agentcanvas/startRun", map[string]any{"uri": uri})
	if err == nil || err.Code != int(CodeRequestFailed) || !strings.Contains(err.Message, "agentcanvas.confinement is required") || !strings.Contains(err.Message, "no Landlock") {
		t.Fatalf("startRun under required without Landlock: %v", err)
	}
	c.configure(map[string]any{"confinement": "auto"})
	var info struct{ RunID string }
	c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri}, &info)
	c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), info.RunID) && strings.Contains(string(p), `"event":"warning"`) && strings.Contains(string(p), "agents run unconfined")
	})
	c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), info.RunID) && strings.Contains(string(p), `"event":"run_finished"`)
	})
	c.configure(map[string]any{"confinement": "never"})
	msg := c.waitNote("window/showMessage", nil)
	if !strings.Contains(string(msg), `agentcanvas.confinement: \"never\" is not one of [auto required off]`) {
		t.Errorf("showMessage %s", msg)
	}
	c.shutdownExit()
}

// agentcanvas.gateway and agentcanvas.gatewayPricing reach the runs' limits; a bad value is
// reported naming the setting and taken as the default.
func TestGatewaySettings(t *testing.T) {
	root, _ := workspace(t, "team.yaml", settingsFlow)
	c := startBinary(t)
	c.initializeWith(root, map[string]any{"gateway": "sometimes", "gatewayPricing": map[string]any{"acme": map[string]any{}}})
	msg := c.waitNote("window/showMessage", nil)
	for _, want := range []string{
		`agentcanvas.gateway: \"sometimes\" is not one of [auto logins off]`,
		`agentcanvas.gatewayPricing: \"acme\" is not a provider`,
	} {
		if !strings.Contains(string(msg), want) {
			t.Errorf("showMessage %s\nwant %s", msg, want)
		}
	}
	c.configure(map[string]any{"gateway": "off", "gatewayPricing": map[string]any{"openai": map[string]any{"gpt-5": map[string]any{"input": 1, "output": 8}}}})
	c.waitNote("window/logMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `gateway off, prices {\"openai\":{\"gpt-5\":{\"input\":1,\"cachedInput\":0,\"cacheWrite\":0,\"output\":8}}}`)
	})
	c.shutdownExit()
}
