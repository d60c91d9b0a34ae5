package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memoryFlow: two members work together (i1), then the curator merges what they learned (i2).
const memoryFlow = `version: 0.2
agents:
  - {id: m1, role: member, runtime: {backendId: command, command: [bash, AGENT]}}
  - {id: m2, role: member, runtime: {backendId: command, command: [bash, AGENT]}}
  - {id: keeper, role: curator, runtime: {backendId: command, command: [bash, AGENT]}}
systemNodes:
  - {id: board, type: blackboard, params: {retention: {keep_last_days: 7}}}
interactions:
  - id: i1
    patternId: role_play_pair
    edges:
      - {source: m1, target: m2, data: {termination: {type: max_rounds, rounds: 1}}}
  - id: i2
    patternId: memory_sync
    dependsOn: [i1]
    edges:
      - {source: m1, target: keeper, data: {termination: {type: max_rounds, rounds: 1}, params: {retention: {keep_last_days: 7}}}}
      - {source: m2, target: keeper, data: {termination: {type: max_rounds, rounds: 1}, params: {retention: {keep_last_days: 7}}}}
      - {source: keeper, target: board, data: {termination: {type: max_rounds, rounds: 1}}}
`

// P19: the curator reads the members' step notes back from the run's log (members that
// already worked are not asked again) and appends to MEMORY.md what it does not hold yet:
// a line the person wrote there stays.
func TestCuratorReadsStepNotesAndAppendsMemory(t *testing.T) {
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `prompt=$(cat)
echo "$AGENTCANVAS_AGENT_ID" >> "`+dir+`/asked"
case "$AGENTCANVAS_AGENT_ID" in
keeper) printf '%s' "$prompt" > "`+dir+`/curator.prompt"; printf '## MEMORY\n- Use tabs in Go files\n- Keep the API stable\n## NOTES\n- synced\n' ;;
*) echo "$AGENTCANVAS_AGENT_ID learned that the cache is cold"; echo "INSTRUCTION: go on"; echo "SOLUTION: done"; echo "<TASK_DONE>" ;;
esac
`)
	ws, f := workspace(t, strings.ReplaceAll(memoryFlow, "AGENT", agent))
	mem := filepath.Join(ws, MemoryDir, "MEMORY.md")
	os.MkdirAll(filepath.Dir(mem), 0o755)
	os.WriteFile(mem, []byte("# Memory\n\n- Use tabs in Go files\n- The person's own rule: never push on Fridays\n"), 0o644)
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("%v %+v", err, out)
	}
	asked, _ := os.ReadFile(filepath.Join(dir, "asked"))
	before, after, _ := strings.Cut(string(asked), "keeper")
	if strings.Contains(after, "m1") || strings.Contains(after, "m2") || !strings.Contains(before, "m1") {
		t.Errorf("turns in order %q: members that worked in i1 must not be asked again for their log", asked)
	}
	cp, _ := os.ReadFile(filepath.Join(dir, "curator.prompt"))
	if !strings.Contains(string(cp), "m1 learned that the cache is cold") {
		t.Errorf("the curator did not get m1's step notes:\n%s", cp)
	}
	b, _ := os.ReadFile(mem)
	got := string(b)
	if !strings.Contains(got, "never push on Fridays") || strings.Count(got, "Use tabs in Go files") != 1 || !strings.HasSuffix(got, "- Keep the API stable\n") {
		t.Errorf("MEMORY.md:\n%s", got)
	}
}
