package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// promptFlow: agent a has rules from the workspace and two skills, one hidden from models.
var promptFlow = pairFlow("commonRules:\n  ruleChainRefs: [\"PROJECT:./AGENTS.md\"]\n",
	"skills: [review, hidden], runtime: {backendId: command, command: [bash, SCRIPT]}", "runtime: {backendId: command, command: [bash, SCRIPT]}", 2)

// Prompts carry the rule files, the skills (not one a model may not invoke) and MEMORY.md as
// it is when the prompt is made: rules and skills are read once per run, MEMORY.md again
// when it changed.
func TestPromptCarriesRulesSkillsAndCurrentMemory(t *testing.T) {
	dir := t.TempDir()
	// Each turn saves its prompt and then changes MEMORY.md (as a curator would).
	agent := script(t, dir, "agent.sh", `n=$(ls "`+dir+`"/prompt.* 2>/dev/null | wc -l)
cat > "`+dir+`/prompt.$n"
echo "- decision $n" >> .agentcanvas/memory/MEMORY.md
echo "ANSWER: ok"
`)
	ws, f := workspace(t, strings.ReplaceAll(promptFlow, "SCRIPT", agent))
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("AGENTS.md", "Always run the tests.\n")
	write(".agentcanvas/skills/review/SKILL.md", "---\nname: review\ndescription: Review a diff.\n---\n")
	write(".agentcanvas/skills/hidden/SKILL.md", "---\nname: hidden\ndescription: Internal.\ndisable-model-invocation: true\n---\n")
	write(".agentcanvas/memory/MEMORY.md", "# Memory\n")
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Sink: rec.sink})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("run: %v %+v", err, out)
	}
	prompts, _ := filepath.Glob(filepath.Join(dir, "prompt.*"))
	if len(prompts) != 4 {
		t.Fatalf("%d prompts, want 4 (2 rounds of 2 turns)", len(prompts))
	}
	for i := range prompts {
		b, err := os.ReadFile(filepath.Join(dir, "prompt."+string(rune('0'+i))))
		if err != nil {
			t.Fatal(err)
		}
		p := string(b)
		if !strings.Contains(p, "[PROJECT ./AGENTS.md]\n  Always run the tests.") {
			t.Errorf("prompt %d has no rule file:\n%s", i, p)
		}
		if strings.Contains(p, "hidden") {
			t.Errorf("prompt %d offers a skill marked disable-model-invocation", i)
		}
		planner := strings.HasPrefix(p, "You are a (id a,")
		if planner != strings.Contains(p, "- review: Review a diff.") {
			t.Errorf("prompt %d: the planner's skills go to the planner only:\n%s", i, p)
		}
		// MEMORY.md as the previous turns left it: every earlier decision, no later one.
		for j := 0; j < 4; j++ {
			if has := strings.Contains(p, "- decision "+string(rune('0'+j))); has != (j < i) {
				t.Errorf("prompt %d: decision %d present = %v", i, j, has)
			}
		}
	}
	// told once (the planner has two prompts), not once a prompt
	n := 0
	for _, e := range rec.events("warning") {
		if strings.Contains(fmt.Sprint(e.Fields["message"]), "is not offered") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d warnings that the hidden skill is not offered, want 1", n)
	}
}
