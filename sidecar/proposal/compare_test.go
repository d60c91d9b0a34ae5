package proposal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// Two runs of the same agents, as a run and its fork: interdiff across them is the patch that
// takes the first's results to the second's. Real git is the oracle: the patch, applied with
// git apply to a copy of each agent's first result, gives its second result; an agent that is
// the same in both has no patch, and one with a proposal in one run only is compared with its
// input.
func TestCompareRunsAgentByAgent(t *testing.T) {
	needGit(t)
	base := map[string]string{"a.txt": "F:one\ntwo\nthree\n", "tool.sh": "X:echo hi\n", "gone.txt": "F:bye\n"}
	ws := t.TempDir()
	writeTree(t, ws, base)
	edits := map[string]map[string]map[string]string{ // run → agent → its work/ as it leaves it
		"run_a": {"coder": {"a.txt": "F:one\nTWO\nthree\n", "tool.sh": "X:echo hi\n", "gone.txt": "F:bye\n"}, "same": {"a.txt": "F:one\ntwo\nthree\nfour\n", "tool.sh": "X:echo hi\n", "gone.txt": "F:bye\n"}},
		"run_b": {"coder": {"a.txt": "F:one\n2\nthree\n", "tool.sh": "F:echo hi\n", "new.txt": "F:new\n"}, "same": {"a.txt": "F:one\ntwo\nthree\nfour\n", "tool.sh": "X:echo hi\n", "gone.txt": "F:bye\n"},
			"extra": {"a.txt": "F:one\ntwo\nthree\n", "tool.sh": "X:echo hi\n", "gone.txt": "F:bye\n", "extra.txt": "F:only in b\n"}},
	}
	results := map[string]string{}
	for run, agents := range edits {
		for agent, files := range agents {
			paths, err := sandbox.Prepare(context.Background(), sandbox.Options{Workspace: ws, RunID: run, AgentID: agent, Files: []string{"a.txt", "tool.sh", "gone.txt"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"a.txt", "tool.sh", "gone.txt"} {
				os.Remove(filepath.Join(paths.WorkDir, p))
			}
			writeTree(t, paths.WorkDir, files)
			if _, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: run, AgentID: agent}); err != nil {
				t.Fatal(err)
			}
			results[run+"/"+agent] = paths.WorkDir
		}
	}
	cs, err := CompareRuns(ws, "run_a", "run_b")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 {
		t.Fatalf("comparisons: %+v", cs)
	}
	for _, c := range cs {
		from := results["run_a/"+c.Agent]
		if c.Agent == "extra" {
			from = filepath.Join(filepath.Dir(results["run_b/extra"]), "input") // no proposal in run_a: its input
		}
		if c.Agent == "same" {
			if len(c.Files) != 0 || c.Patch != "" {
				t.Errorf("same: %+v", c)
			}
			continue
		}
		got := copyTree(t, from)
		os.WriteFile(filepath.Join(got, "x.patch"), []byte(c.Patch), 0o644)
		if out, err := run(t, got, "git", "apply", "x.patch"); err != nil {
			t.Fatalf("%s: git apply: %v\n%s\n%s", c.Agent, err, out, c.Patch)
		}
		os.Remove(filepath.Join(got, "x.patch"))
		if d := diffSnapshots(gitView(snapshot(t, got, true)), gitView(snapshot(t, results["run_b/"+c.Agent], true))); d != "" {
			t.Errorf("%s: the patch applied to run_a's result is not run_b's:\n%s\n%s", c.Agent, d, c.Patch)
		}
	}
	c, err := CompareProposals(ws, ".agentcanvas/sandboxes/run_a/coder/proposal/proposal.json", ".agentcanvas/sandboxes/run_b/coder")
	if err != nil || strings.Join(c.Files, " ") != "a.txt gone.txt new.txt tool.sh" {
		t.Errorf("two proposals: %v %+v", err, c)
	}
}
