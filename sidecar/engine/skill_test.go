package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

// writeSkill writes .agentcanvas/skills/<folder>/SKILL.md.
func writeSkill(t *testing.T, ws, folder, text string) {
	t.Helper()
	dir := filepath.Join(ws, ".agentcanvas", "skills", folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const releaseNotes = "---\nname: release-notes\ndescription: Write the release notes\ndisable-model-invocation: true\n---\n\n# Release notes\n\nList every change since the last tag in NOTES.md.\n"

func TestReadSkill(t *testing.T) {
	ws := t.TempDir()
	writeSkill(t, ws, "release-notes", releaseNotes)
	writeSkill(t, ws, "mismatch", "---\nname: other\ndescription: d\n---\nbody\n")
	writeSkill(t, ws, "bare", "just text\n")
	writeSkill(t, ws, "empty", "---\nname: empty\ndescription: d\n---\n\n")
	s, err := ReadSkill(ws, "release-notes")
	if err != nil {
		t.Fatal(err)
	}
	if s.Description != "Write the release notes" || !s.DisableModelInvocation || s.Instructions != "# Release notes\n\nList every change since the last tag in NOTES.md." {
		t.Errorf("read %+v", s)
	}
	for name, want := range map[string]string{
		"missing":  `skill "missing" not found: create .agentcanvas/skills/missing/SKILL.md`,
		"../flows": "is not a folder name",
		"mismatch": "says name: other, but the folder is mismatch",
		"bare":     ".agentcanvas/skills/bare/SKILL.md has no YAML frontmatter",
		"empty":    ".agentcanvas/skills/empty/SKILL.md has no instructions",
	} {
		if _, err := ReadSkill(ws, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadSkill(%q) = %v, want an error containing %q", name, err, want)
		}
	}
}

// The flow a skill invocation writes is a valid flow (the validator finds nothing to say),
// and a file outside the workspace is refused before anything is written.
func TestWriteSkillFlow(t *testing.T) {
	ws := gitWorkspace(t)
	writeSkill(t, ws, "release-notes", releaseNotes)
	f, err := WriteSkillFlow(ws, "run_20261123-120000_abcdef", SkillInvocation{Name: "release-notes", Arguments: "since v1.2", Files: []string{"README.md"}, Backend: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if f.File != filepath.Join(ws, ".agentcanvas", "runs", "run_20261123-120000_abcdef", "skill-release-notes.yaml") || f.Name != "skill-release-notes" {
		t.Errorf("file %s, name %s", f.File, f.Name)
	}
	src, err := os.ReadFile(f.File)
	if err != nil {
		t.Fatal(err)
	}
	again := flow.Parse(f.File, src)
	if ds := validate.Flow(again, validate.Workspace{Root: ws}); len(ds) > 0 {
		t.Errorf("the skill flow does not validate clean: %v\n%s", ds, src)
	}
	a := again.Agents[0]
	if a.Instructions != "# Release notes\n\nList every change since the last tag in NOTES.md." || a.Runtime.BackendID != "claude" || a.Role != "worker" || len(a.Files) != 1 || again.Description != "since v1.2" {
		t.Errorf("agent %+v runtime %+v description %q", a, a.Runtime, again.Description)
	}

	for _, bad := range []string{"../etc/passwd", "/etc/passwd", ".git/config"} {
		_, err := WriteSkillFlow(ws, "run_20261123-120001_abcdef", SkillInvocation{Name: "release-notes", Files: []string{bad}})
		if err == nil || !strings.Contains(err.Error(), "skill release-notes: file") {
			t.Errorf("file %q: %v", bad, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", "runs", "run_20261123-120001_abcdef")); !os.IsNotExist(err) {
		t.Errorf("a refused invocation left its run folder: %v", err)
	}
}

// A person invokes a skill marked disable-model-invocation: the agent, a real process, gets
// the skill's instructions and the person's request, edits its sandbox and hands off; the
// run completes and its proposal holds the edit.
func TestSkillRunThroughAManager(t *testing.T) {
	ws := gitWorkspace(t)
	writeSkill(t, ws, "release-notes", releaseNotes)
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `cat > "`+dir+`/prompt"
echo "- first change" > NOTES.md
cat <<EOH
Wrote the notes.
HANDOFF
Context:        release notes
Goal:           NOTES.md
DoD:            NOTES.md lists the changes
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/skill/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/skill/proposal/proposal.json
ChangedFiles:
  - NOTES.md
Tests:
  - (none)
Next:
  - review
EOH
`)
	rec := &recorder{}
	m := &Manager{Limits: recording, Workspace: ws, Event: rec.sink}
	info, err := m.StartSkill(SkillInvocation{Name: "release-notes", Arguments: "since v1.2", Backend: "command", Command: []string{"bash", agent}, Files: []string{"README.md"}}, StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Wait(info.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted || len(out.Interactions) != 1 || out.Interactions[0].Reason != "bridged" {
		t.Fatalf("outcome %+v", out)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, "prompt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"List every change since the last tag in NOTES.md.", "since v1.2", "Do what the person who invoked you asks", "HANDOFF"} {
		if !strings.Contains(string(prompt), want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	if len(out.Proposals) != 1 {
		t.Fatalf("proposals %v", out.Proposals)
	}
	patch, err := os.ReadFile(filepath.Join(ws, filepath.Dir(out.Proposals[0]), "changes.patch"))
	if err != nil || !strings.Contains(string(patch), "+- first change") {
		t.Errorf("the proposal's patch: %v\n%s", err, patch)
	}
	// Listed like any run, under the skill's flow, which can be read afterwards.
	runs, err := m.List()
	if err != nil || len(runs) != 1 || runs[0].Flow != "skill-release-notes" || runs[0].FlowFile != SkillFlowFile(ws, info.RunID, "release-notes") {
		t.Errorf("listRuns %+v, %v", runs, err)
	}
	if _, err := os.Stat(runs[0].FlowFile); err != nil {
		t.Error(err)
	}
}
