package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// writeFlows makes a workspace (marked by .agentcanvas/) with flows in it.
func writeFlows(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".agentcanvas"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const cleanFlow = `version: 0.2
agents: [{id: lead, role: manager}, {id: w1}]
interactions:
  - id: i1
    patternId: manager_worker
    edges: [{source: lead, target: w1, data: {termination: {type: max_rounds, rounds: 2}}}]
`

const warningFlow = `version: 0.2
agents: [{id: lead, role: manager, runtime: {env: [HOME, HOME]}}, {id: w1}]
interactions:
  - id: i1
    patternId: manager_worker
    edges: [{source: lead, target: w1, data: {termination: {type: max_rounds, rounds: 2}}}]
`

const brokenFlow = `version: 0.2
agents: [{id: lead, role: manager}, {id: w1}]
interactions:
  - id: i1
    patternId: manager_worker
    edges: [{source: lead, target: w2, data: {}}]
`

func TestValidateExitCodes(t *testing.T) {
	root := writeFlows(t, map[string]string{
		"clean.yaml":        cleanFlow,
		"warn.yaml":         warningFlow,
		"flows/broken.yaml": brokenFlow,
		"flows/notes.txt":   "not a flow",
		// Workspace state: flows/ is validated, a sandbox's copy of user files is not.
		".agentcanvas/flows/team.yaml":                 brokenFlow,
		".agentcanvas/sandboxes/r1/a/work/config.yaml": "key: [unclosed\n",
		"node_modules/pkg/x.yaml":                      "key: [unclosed\n",
	})
	if code, out, errOut := runCmd(t, "validate", filepath.Join(root, "clean.yaml")); code != 0 || out != "" || errOut != "✓ 1 flow file valid\n" {
		t.Errorf("clean: exit %d, output %q, stderr %q", code, out, errOut)
	}
	// Flags after the paths are read as flags, not as files.
	if code, out, errOut := runCmd(t, "validate", filepath.Join(root, "clean.yaml"), "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json after the path: exit %d, output %q, stderr %q", code, out, errOut)
	}
	code, out, _ := runCmd(t, "validate", filepath.Join(root, "warn.yaml"))
	if code != 0 || !strings.Contains(out, ": warning: schema: ") {
		t.Errorf("warnings only: exit %d, output %q", code, out)
	}
	code, out, errOut := runCmd(t, "validate", filepath.Join(root, "flows"))
	if code != 1 || errOut != "1 flow file: 2 errors, 0 warnings\n" {
		t.Errorf("errors: exit %d, stderr %q", code, errOut)
	}
	want := "\n" + filepath.Join(root, "flows", "broken.yaml") + ":6:36: error: unknown-agent: the edge's target \"w2\" names no agent or system node; did you mean \"w1\"?\n"
	if !strings.Contains("\n"+out, want) {
		t.Errorf("output = %q, want a line %q", out, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if parts := strings.SplitN(line, ": ", 4); len(parts) != 4 || (parts[1] != "error" && parts[1] != "warning") {
			t.Errorf("not FILE:LINE:COL: SEVERITY: CODE: MESSAGE: %q", line)
		}
	}
	if code, _, errOut := runCmd(t, "validate"); code != 2 || !strings.Contains(errOut, "usage") {
		t.Errorf("no path: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runCmd(t, "validate", "--bogus", root); code != 2 {
		t.Errorf("bad flag: exit %d", code)
	}
	if code, _, errOut := runCmd(t, "validate", filepath.Join(root, "missing.yaml"), filepath.Join(root, "clean.yaml")); code != 2 || errOut == "" {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
	// A folder: every *.yaml under it, nested ones included; other files ignored.
	code, out, _ = runCmd(t, "validate", root)
	if code != 1 || !strings.Contains(out, "broken.yaml") || !strings.Contains(out, "warn.yaml") || strings.Contains(out, "notes.txt") ||
		!strings.Contains(out, filepath.Join(".agentcanvas", "flows", "team.yaml")) || strings.Contains(out, "config.yaml") || strings.Contains(out, "x.yaml") {
		t.Errorf("folder: exit %d, output %q", code, out)
	}
}

func TestValidateJSON(t *testing.T) {
	root := writeFlows(t, map[string]string{"a.yaml": brokenFlow, "b.yaml": cleanFlow})
	code, out, _ := runCmd(t, "validate", "--json", root)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	var ds []map[string]any
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("not one JSON array: %v\n%s", err, out)
	}
	if len(ds) < 2 {
		t.Fatalf("diagnostics = %v", ds)
	}
	keys := []string{"file", "line", "column", "endLine", "endColumn", "severity", "code", "message"}
	for _, d := range ds {
		if len(d) != len(keys) {
			t.Errorf("fields = %v, want exactly %v", d, keys)
		}
		for _, k := range keys {
			if _, ok := d[k]; !ok {
				t.Errorf("missing %s in %v", k, d)
			}
		}
	}
	var unknown map[string]any
	for _, d := range ds {
		if d["code"] == "unknown-agent" {
			unknown = d
		}
	}
	if unknown == nil || unknown["file"] != filepath.Join(root, "a.yaml") || unknown["severity"] != "error" || unknown["line"] != float64(6) || unknown["column"] != float64(36) || unknown["endColumn"] != float64(38) || unknown["endLine"] != float64(6) {
		t.Errorf("unknown-agent diagnostic = %v", unknown)
	}
	// A clean flow prints an empty array, not null.
	_, out, _ = runCmd(t, "validate", "--json", filepath.Join(root, "b.yaml"))
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("clean --json = %q", out)
	}
}

// TestValidateWorkspaceRoot: workspace rules look in the nearest folder with .agentcanvas/.
func TestValidateWorkspaceRoot(t *testing.T) {
	flowWithSkill := strings.Replace(cleanFlow, "{id: w1}", "{id: w1, skills: [review]}", 1)
	root := writeFlows(t, map[string]string{
		"sub/dir/f.yaml":                      flowWithSkill,
		".agentcanvas/skills/review/SKILL.md": "---\nname: review\ndescription: Reviews a diff.\n---\n",
	})
	if code, out, _ := runCmd(t, "validate", filepath.Join(root, "sub")); code != 0 {
		t.Errorf("skill in the workspace root: exit %d: %s", code, out)
	}
	if err := os.Remove(filepath.Join(root, ".agentcanvas/skills/review/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCmd(t, "validate", filepath.Join(root, "sub")); code != 1 || !strings.Contains(out, "skill-invalid") {
		t.Errorf("missing skill: exit %d: %s", code, out)
	}
}

// TestValidateRepositoryFlows runs the command on the repository's own examples.
func TestValidateRepositoryFlows(t *testing.T) {
	examples, _ := filepath.Glob("../../../flows/*.yaml")
	if len(examples) < 9 {
		t.Fatalf("examples = %v", examples)
	}
	if code, out, _ := runCmd(t, append([]string{"validate"}, examples...)...); code != 0 || out != "" {
		t.Errorf("examples: exit %d\n%s", code, out)
	}
	if code, _, _ := runCmd(t, "validate", "../../../flows/invalid"); code != 1 {
		t.Errorf("invalid examples: exit %d", code)
	}
}
