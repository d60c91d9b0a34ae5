//go:build unix

package main

// A revision survives a kill, through real processes: request-changes killed after revision 1
// was kept, after the new patch was written (and before proposal.json), and after the new
// revision was made but before the review recorded it; then asked again. Every revision stays
// kept as it was, the proposal is whole, and the next revision is numbered after the last.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/reviewfixture"
)

// countingCoder writes "hello" first, then on each revision turn appends the revision it was
// asked about, so every revision's patch differs.
const countingCoder = `prompt=$(cat)
n=$(grep -o 'A reviewer read revision [0-9]*' <<<"$prompt" | grep -o '[0-9]*$')
if [ -n "$n" ]; then
  echo "after revision $n" >> greet.txt
  printf 'ANSWER c1: done\n'
  exit 0
fi
printf 'hello\n' > greet.txt
echo changed
`

// revisedProposal runs the flow once and comments on its proposal; it returns the workspace,
// the proposal and its agent folder.
func revisedProposal(t *testing.T) (ws, ref, agentDir string) {
	t.Helper()
	ws = reviewfixture.Workspace(t, map[string]string{"greet.txt": "hi\n", "agents/coder.sh": countingCoder, "flows/fix.yaml": reviewFlow("greet.txt")})
	ref, agentDir = runAndComment(t, ws)
	return ws, ref, agentDir
}

var reviewFlow = reviewfixture.Flow

// runAndComment runs the review flow of ws and comments on the proposal it made.
func runAndComment(t *testing.T, ws string) (ref, agentDir string) {
	t.Helper()
	code, _, out, errs := runProc(t, nil, "run", "--json", "--non-interactive", "--workspace", ws, filepath.Join(ws, "flows", "fix.yaml"))
	if code != 0 {
		t.Fatalf("run: %s", errs)
	}
	for _, line := range strings.Split(out, "\n") {
		var raw map[string]any
		if json.Unmarshal([]byte(line), &raw) == nil && raw["event"] == "proposal_created" {
			ref, _ = raw["proposal"].(string)
		}
	}
	if ref == "" {
		t.Fatalf("no proposal:\n%s", out)
	}
	if code, _, _, errs := runProc(t, nil, "proposal", "comment", "--workspace", ws, ref, "greet.txt:1=go on"); code != 0 {
		t.Fatal(errs)
	}
	return ref, filepath.Join(ws, filepath.Dir(filepath.Dir(ref)))
}

// reviewOf reads the proposal's review.json.
func reviewOf(t *testing.T, agentDir string) (revision int, revising bool) {
	t.Helper()
	var st struct {
		Revision int             `json:"revision"`
		Revising json.RawMessage `json:"revising"`
	}
	b, _ := os.ReadFile(filepath.Join(agentDir, "proposal/review.json"))
	json.Unmarshal(b, &st)
	return st.Revision, len(st.Revising) > 0 && string(st.Revising) != "null"
}

func TestKilledRequestChangesKeepsEveryRevision(t *testing.T) {
	for _, tc := range []struct {
		point string
		made  bool // the killed run's revision is recorded by the retry
	}{{"revision-kept", false}, {"create-patch", false}, {"revision-finish", true}} {
		t.Run(tc.point, func(t *testing.T) {
			ws, ref, agentDir := revisedProposal(t)
			rev1, _ := os.ReadFile(filepath.Join(agentDir, "proposal/changes.patch"))
			ask := []string{"proposal", "request-changes", "--workspace", ws, "--non-interactive", ref}
			if _, killed, _, errs := runProc(t, []string{"AGENTCANVAS_TEST_KILL_AT=" + tc.point}, ask...); !killed {
				t.Fatalf("request-changes was not killed at %s: %s", tc.point, errs)
			}
			if kept, _ := os.ReadFile(filepath.Join(agentDir, "proposal/revisions/1/changes.patch")); len(kept) > 0 && string(kept) != string(rev1) {
				t.Fatalf("revision 1's kept patch is not revision 1's")
			}
			code, _, out, errs := runProc(t, nil, ask...)
			errs = out + errs
			if code != 0 {
				t.Fatalf("request-changes again: %s", errs)
			}
			want := "was rolled back: the proposal stays at revision 1"
			if tc.made {
				want = "was finished: the proposal it had made is revision 2"
			}
			if tc.point != "revision-kept" && !strings.Contains(errs, want) {
				t.Fatalf("the retry did not say what it settled (%q):\n%s", want, errs)
			}
			last := 2
			if tc.made {
				last = 3
			}
			if n, revising := reviewOf(t, agentDir); n != last || revising {
				t.Fatalf("after the retry: revision %d (revising %v), want %d", n, revising, last)
			}
			if kept, _ := os.ReadFile(filepath.Join(agentDir, "proposal/revisions/1/changes.patch")); string(kept) != string(rev1) {
				t.Fatalf("revision 1 was not kept as it was:\n%s\nwant\n%s", kept, rev1)
			}
			for n := 1; n < last; n++ {
				if code, _, _, errs := runProc(t, nil, "proposal", "interdiff", "--workspace", ws, "--from", strconv.Itoa(n), "--to", strconv.Itoa(n+1), ref); code != 0 {
					t.Fatalf("interdiff %d → %d: %s", n, n+1, errs)
				}
			}
			if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, ref); code != 0 {
				t.Fatalf("the last revision does not apply: %s", errs)
			}
		})
	}
}

// A run started from its workspace with a relative flow path: a revision asked for from
// another folder finds the run's flow in the run's workspace.
func TestRequestChangesFromAnotherFolderFindsTheRunsFlow(t *testing.T) {
	ws := reviewfixture.Workspace(t, map[string]string{"greet.txt": "hi\n", "agents/coder.sh": countingCoder, "flows/fix.yaml": reviewFlow("greet.txt")})
	c := cli(nil, "run", "--json", "--non-interactive", "flows/fix.yaml")
	c.Dir = ws
	out, err := c.Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var ref string
	for _, line := range strings.Split(string(out), "\n") {
		var raw map[string]any
		if json.Unmarshal([]byte(line), &raw) == nil && raw["event"] == "proposal_created" {
			ref, _ = raw["proposal"].(string)
		}
	}
	ask := cli(nil, "proposal", "request-changes", "--workspace", ws, "--non-interactive", "--comment", "greet.txt:1=go on", filepath.Join(ws, ref))
	ask.Dir = t.TempDir()
	if b, err := ask.CombinedOutput(); err != nil {
		t.Fatalf("request-changes from another folder: %v\n%s", err, b)
	}
}

// Two request-changes of one proposal at once (the editor's and a terminal's, or a command run
// twice): no revision is archived over another. Each either makes the next revision or is
// refused saying why; every kept revision is whole and different from the others, the review
// counts them all, and the last applies.
func TestTwoRequestChangesAtOnceKeepEveryRevision(t *testing.T) {
	ws, ref, agentDir := revisedProposal(t)
	rev1, _ := os.ReadFile(filepath.Join(agentDir, "proposal/changes.patch"))
	ask := []string{"proposal", "request-changes", "--workspace", ws, "--non-interactive", "--comment", "greet.txt:1=more", ref}
	codes, errs := together(t, ask, ask)
	made := 0
	for i, code := range codes {
		if code == 0 {
			made++
		} else if !strings.Contains(errs[i], "revision") {
			t.Fatalf("a refused request-changes did not say why: exit %d\n%s", code, errs[i])
		}
	}
	n, revising := reviewOf(t, agentDir)
	if made == 0 || n != 1+made || revising {
		t.Fatalf("%d of two made a revision; the review is at revision %d (revising %v)\n%s", made, n, revising, strings.Join(errs, "\n"))
	}
	seen := map[string]int{string(rev1): 1}
	for k := 1; k < n; k++ {
		kept, err := os.ReadFile(filepath.Join(agentDir, "proposal/revisions", strconv.Itoa(k), "changes.patch"))
		if err != nil {
			t.Fatalf("revision %d was not kept: %v", k, err)
		}
		if k == 1 && string(kept) != string(rev1) {
			t.Fatalf("revision 1 was archived over")
		}
		if j, dup := seen[string(kept)]; dup && j != k {
			t.Fatalf("revisions %d and %d hold the same patch", j, k)
		}
		seen[string(kept)] = k
	}
	if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, ref); code != 0 {
		t.Fatalf("the last revision does not apply: %s", errs)
	}
}
