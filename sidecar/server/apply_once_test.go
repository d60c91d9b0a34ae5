//go:build unix

package server

// Exactly once across the editor and the terminal: the sidecar serving the editor and an
// `agentcanvas proposal` command in a terminal act on one proposal at the same moment. Each
// is a separate process; the workspace lock and the ledger decide, and the proposal's status,
// the ledger and the files agree afterwards.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// editorIn starts the sidecar serving the editor of a new workspace.
func editorIn(t *testing.T) (string, *client) {
	root := t.TempDir()
	c := startBinary(t)
	c.initialize(root)
	c.waitNote("agentcanvas/status", nil)
	return root, c
}

// tailProposalInEditor makes run's proposal of agent w1 through the editor's methods: two
// lines added at the end of each of n files (hunks with no context after them, the kind a
// second apply would add again). It returns the files and their applied content.
func tailProposalInEditor(t *testing.T, c *client, root, run string, n int) map[string]string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s/f%02d.txt", run, i)
		os.MkdirAll(filepath.Join(root, run), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), []byte("one\ntwo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	var paths struct{ WorkDir string }
	c.mustCall("agentcanvas/prepareSandbox", map[string]any{"runId": run, "agentId": "w1", "files": names}, &paths)
	want := map[string]string{}
	for _, name := range names {
		f, err := os.OpenFile(filepath.Join(paths.WorkDir, name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("added 1\nadded 2\n")
		f.Close()
		want[name] = "one\ntwo\nadded 1\nadded 2\n"
	}
	c.mustCall("agentcanvas/createProposal", map[string]any{"runId": run, "agentId": "w1"}, nil)
	return want
}

// atOnce runs the editor's call and the terminal's command together; it returns the editor's
// error ("" for none) and the command's exit code and output.
func atOnce(t *testing.T, c *client, method string, params map[string]any, args ...string) (string, int, string) {
	t.Helper()
	var wg sync.WaitGroup
	var rpcErr, out string
	code := 0
	wg.Add(2)
	go func() {
		defer wg.Done()
		if _, err := c.call(method, params); err != nil {
			rpcErr = err.Message
		}
	}()
	go func() {
		defer wg.Done()
		b, err := exec.Command(binary(t), args...).CombinedOutput()
		out = string(b)
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	return rpcErr, code, out
}

// liveApplies counts the applies of run's proposal the ledger holds and has not reverted.
func liveApplies(t *testing.T, root, run string) int {
	t.Helper()
	out, err := exec.Command(binary(t), "proposal", "ledger", "--workspace", root, "--json").Output()
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	var lg struct {
		Entries []struct {
			ID, Kind, Proposal string
		} `json:"entries"`
		Reverted map[string]string `json:"reverted"`
	}
	if err := json.Unmarshal(out, &lg); err != nil {
		t.Fatalf("ledger: %v\n%s", err, out)
	}
	n := 0
	for _, e := range lg.Entries {
		if e.Kind == "apply" && strings.Contains(e.Proposal, "/"+run+"/") && lg.Reverted[e.ID] == "" {
			n++
		}
	}
	return n
}

// stateOf is run's proposal's state as the editor lists it.
func stateOf(t *testing.T, c *client, run string) string {
	t.Helper()
	var list []struct{ State string }
	c.mustCall("agentcanvas/listProposals", map[string]any{"runId": run}, &list)
	if len(list) != 1 {
		t.Fatalf("listProposals %s: %+v", run, list)
	}
	return list[0].State
}

// filesAre reports whether every file holds its wanted content ("" if so, else the first that
// does not).
func filesAre(root string, want map[string]string) string {
	for name, w := range want {
		if b, _ := os.ReadFile(filepath.Join(root, name)); string(b) != w {
			return fmt.Sprintf("%s: %q", name, b)
		}
	}
	return ""
}

func TestEditorAndTerminalApplyOneProposalOnce(t *testing.T) {
	root, c := editorIn(t)
	for trial := range 4 {
		run := fmt.Sprintf("r%d", trial)
		want := tailProposalInEditor(t, c, root, run, 10)
		rpcErr, code, out := atOnce(t, c, "agentcanvas/applyProposal", map[string]any{"runId": run, "agentId": "w1"},
			"proposal", "apply", "--workspace", root, filepath.Join(root, ".agentcanvas/sandboxes", run, "w1"))
		if (rpcErr == "") == (code == 0) {
			t.Fatalf("trial %d: the editor's apply said %q and the terminal's exited %d:\n%s", trial, rpcErr, code, out)
		}
		if loser := rpcErr + out; !strings.Contains(loser, "was applied already") {
			t.Fatalf("trial %d: the later apply was not told it was applied already: %s", trial, loser)
		}
		if d := filesAre(root, want); d != "" {
			t.Fatalf("trial %d: two applies at once wrote the changes twice: %s", trial, d)
		}
		if n := liveApplies(t, root, run); n != 1 {
			t.Fatalf("trial %d: %d applies in the ledger", trial, n)
		}
		if st := stateOf(t, c, run); st != "applied" {
			t.Fatalf("trial %d: the proposal is %s", trial, st)
		}
	}
}

// The editor rejects a proposal while the terminal applies it: whichever comes first, the
// status says what the ledger says and the files hold (applied with one live apply and the
// lines once, or rejected with none and the files as they were), and a refused reject says to
// revert first; a reject from the editor once it is applied is refused.
func TestEditorRejectsWhileTheTerminalApplies(t *testing.T) {
	root, c := editorIn(t)
	for trial := range 4 {
		run := fmt.Sprintf("r%d", trial)
		want := tailProposalInEditor(t, c, root, run, 5)
		before := map[string]string{}
		for name := range want {
			before[name] = "one\ntwo\n"
		}
		rpcErr, code, out := atOnce(t, c, "agentcanvas/rejectProposal", map[string]any{"runId": run, "agentId": "w1", "reason": "no"},
			"proposal", "apply", "--workspace", root, filepath.Join(root, ".agentcanvas/sandboxes", run, "w1"))
		st, n := stateOf(t, c, run), liveApplies(t, root, run)
		switch {
		case st == "applied" && n == 1 && filesAre(root, want) == "":
			if code != 0 || (rpcErr != "" && !strings.Contains(rpcErr, "revert it first")) {
				t.Fatalf("trial %d: applied, but the reject said %q and the apply exited %d: %s", trial, rpcErr, code, out)
			}
		case st == "rejected" && n == 0 && filesAre(root, before) == "":
			if rpcErr != "" {
				t.Fatalf("trial %d: rejected, but the reject said %q", trial, rpcErr)
			}
		default:
			t.Fatalf("trial %d: status %s, %d live applies, files %s (reject %q, apply exit %d: %s)",
				trial, st, n, filesAre(root, want), rpcErr, code, out)
		}
		// Applied, a reject from the editor afterwards is refused too, and changes nothing.
		if st == "applied" {
			_, rerr := c.call("agentcanvas/rejectProposal", map[string]any{"runId": run, "agentId": "w1", "reason": "no"})
			if rerr == nil || !strings.Contains(rerr.Message, "revert it first") {
				t.Fatalf("trial %d: the editor rejected an applied proposal: %v", trial, rerr)
			}
			if st := stateOf(t, c, run); st != "applied" || filesAre(root, want) != "" {
				t.Fatalf("trial %d: after the refused reject: %s, %s", trial, st, filesAre(root, want))
			}
		}
	}
}
