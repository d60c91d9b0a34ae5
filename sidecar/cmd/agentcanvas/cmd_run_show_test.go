package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// A dry run (flags typed after the flow file) leaves a transcript that `run show` prints as
// a timeline, one agent's turns whole, or JSON; a run or agent without turns is a clear error.
func TestRunShowPrintsTheTranscript(t *testing.T) {
	ws, file := runWorkspace(t, "manager-worker.yaml")
	var out, errb bytes.Buffer
	if code := run([]string{"run", file, "--json", "--dry-run", "--non-interactive"}, strings.NewReader(""), &out, &errb); code != exitOK {
		t.Fatalf("flags after the file: exit %d\n%s", code, errb.String())
	}
	code, js, errOut := runCmd(t, "run", "show", "last", "--workspace", ws, "--json")
	var turns []transcript.Turn
	if code != exitOK || json.Unmarshal([]byte(js), &turns) != nil || len(turns) < 2 {
		t.Fatalf("show --json: exit %d, %d turns, stderr %s", code, len(turns), errOut)
	}
	first := turns[0]
	if first.Prompt == "" || first.Reply == "" || first.Backend != "dry-run" || first.Round != 1 {
		t.Errorf("first turn: %+v", first)
	}
	runID := ""
	code, timeline, _ := runCmd(t, "run", "show", "--workspace", ws, "last")
	for _, tr := range turns {
		if !strings.Contains(timeline, "→ "+tr.Agent) {
			t.Errorf("timeline lacks %s:\n%s", tr.Agent, timeline)
		}
	}
	if code != exitOK || !strings.HasPrefix(timeline, "run run_") {
		t.Fatalf("timeline: exit %d\n%s", code, timeline)
	}
	runID = strings.Fields(timeline)[1]
	runID = strings.TrimSuffix(runID, ":")
	code, whole, _ := runCmd(t, "run", "show", "--workspace", ws, runID, first.Agent)
	if code != exitOK || !strings.Contains(whole, "prompt:\n") || !strings.Contains(whole, strings.SplitN(first.Prompt, "\n", 2)[0]) || !strings.Contains(whole, "reply:\n") {
		t.Errorf("one agent:\n%s", whole)
	}
	if code, _, e := runCmd(t, "run", "show", "--workspace", ws, runID, "nobody"); code != exitFail || !strings.Contains(e, `agent "nobody" has no turns`) {
		t.Errorf("unknown agent: exit %d %q", code, e)
	}
	if code, _, e := runCmd(t, "run", "show", "--workspace", ws, "run_nope"); code != exitFail || !strings.Contains(e, "no transcript") {
		t.Errorf("unknown run: exit %d %q", code, e)
	}
	if code, _, e := runCmd(t, "run", "show", "--workspace", ws, "../x"); code != exitFail || !strings.Contains(e, "run id") {
		t.Errorf("bad run id: exit %d %q", code, e)
	}
}

// A transcript whose first turn a full disk cut short (and the next turn joined it, before
// appends started on a line of their own) still shows its other turns, with a warning.
func TestRunShowReadsPastATornTurn(t *testing.T) {
	ws := t.TempDir()
	const id = "run_20261120-100000_abcdef"
	dir := filepath.Join(ws, ".agentcanvas", "runs", id)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "turns.jsonl"), []byte(`{"seq":1,"agent":"coder","reply":"cut sh`+
		`{"seq":2,"agent":"coder","status":"completed","reply":"the second turn"}`+"\n"+
		`{"seq":3,"agent":"coder","status":"completed","reply":"the third turn"}`+"\n"), 0o600)
	code, out, errs := runCLI(t, "run", "show", "--workspace", ws, id, "coder")
	if code != exitOK || !strings.Contains(out, "the second turn") || !strings.Contains(out, "the third turn") ||
		!strings.Contains(errs, "warning: ") || !strings.Contains(errs, "skipped 1 line that does not parse (line 1") {
		t.Fatalf("run show of a torn transcript: %d\n%s\n%s", code, out, errs)
	}
}
