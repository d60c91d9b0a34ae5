//go:build unix

package main

// Exactly once, through real processes: an applied proposal is not applied again, by a second
// command, by two at once, by a run resumed after a kill just past its auto-apply; a rejection
// of an applied proposal is refused; a proposal made again from an unchanged sandbox keeps its
// state.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// tailProposal is coder's proposal adding two lines at the end of each of n files (the hunks
// have no context after their changes, the case a second apply used to double).
func tailProposal(t *testing.T, n int) (ws, prop string, applied map[string]string) {
	t.Helper()
	ws = t.TempDir()
	var names []string
	for i := range n {
		name := fmt.Sprintf("src/f%02d.txt", i)
		os.MkdirAll(filepath.Join(ws, "src"), 0o755)
		os.WriteFile(filepath.Join(ws, name), []byte("one\ntwo\nthree\nfour\n"), 0o644)
		names = append(names, name)
	}
	code, out, errs := runCLI(t, append([]string{"sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "coder"}, names...)...)
	if code != exitOK {
		t.Fatalf("prepare: %s", errs)
	}
	var paths map[string]string
	json.Unmarshal([]byte(out), &paths)
	for _, name := range names {
		f, _ := os.OpenFile(filepath.Join(paths["workDir"], name), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("added 1\nadded 2\n")
		f.Close()
	}
	if code, _, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "coder"); code != exitOK {
		t.Fatalf("create: %s", errs)
	}
	applied = tree(t, ws)
	for _, name := range names {
		applied[name] = "644:one\ntwo\nthree\nfour\nadded 1\nadded 2\n"
	}
	return ws, filepath.Join(ws, ".agentcanvas/sandboxes/r1/coder"), applied
}

// proposalState is the proposal's state as list says it.
func proposalState(t *testing.T, ws string) string {
	t.Helper()
	code, _, out, errs := runProc(t, nil, "proposal", "list", "--workspace", ws, "--json")
	if code != 0 {
		t.Fatal(errs)
	}
	var list []struct {
		State string `json:"state"`
	}
	json.Unmarshal([]byte(out), &list)
	if len(list) != 1 {
		t.Fatalf("list: %s", out)
	}
	return list[0].State
}

func TestApplyTwiceAppliesOnce(t *testing.T) {
	ws, prop, applied := tailProposal(t, 30)
	if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop); code != 0 {
		t.Fatal(errs)
	}
	code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop)
	if code != exitFail || !strings.Contains(errs, "was applied already (ledger entry ") || !strings.Contains(errs, "Revert it first (agentcanvas proposal revert ") {
		t.Fatalf("a second apply: exit %d\n%s", code, errs)
	}
	if d := treeDiff(applied, tree(t, ws)); d != "" {
		t.Fatalf("the second apply changed the workspace:\n%s", d)
	}
	if n := ledgerApplies(t, ws); n != 1 {
		t.Fatalf("%d applies in the ledger", n)
	}
	// Reverted, it applies again.
	runProc(t, nil, "proposal", "revert", "--workspace", ws, prop)
	if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop); code != 0 {
		t.Fatalf("an apply after the revert: %s", errs)
	}
}

func TestParallelAppliesOfOneProposalApplyOnce(t *testing.T) {
	const trials = 5
	for i := range trials {
		ws, prop, applied := tailProposal(t, 20)
		args := []string{"proposal", "apply", "--workspace", ws, prop}
		codes, errs := together(t, args, args)
		if codes[0]+codes[1] != exitFail {
			t.Fatalf("trial %d: exit codes %v\n%s", i, codes, strings.Join(errs, "\n"))
		}
		loser := errs[0]
		if codes[1] != 0 {
			loser = errs[1]
		}
		if !strings.Contains(loser, "was applied already") {
			t.Fatalf("trial %d: the second apply was not told: %s", i, loser)
		}
		if d := treeDiff(applied, tree(t, ws)); d != "" {
			t.Fatalf("trial %d: two applies at once wrote the changes twice:\n%s", i, d)
		}
		if n := ledgerApplies(t, ws); n != 1 {
			t.Fatalf("trial %d: %d applies in the ledger", i, n)
		}
	}
}

func TestRejectOfAnAppliedProposalIsRefused(t *testing.T) {
	ws, prop, applied := tailProposal(t, 3)
	if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop); code != 0 {
		t.Fatal(errs)
	}
	code, _, _, errs := runProc(t, nil, "proposal", "reject", "--workspace", ws, "--reason", "no", prop)
	if code != exitFail || !strings.Contains(errs, "is applied (ledger entry ") || !strings.Contains(errs, "revert it first (agentcanvas proposal revert ") {
		t.Fatalf("reject of an applied proposal: exit %d\n%s", code, errs)
	}
	if st := proposalState(t, ws); st != "applied" {
		t.Fatalf("after the refused reject the proposal is %s", st)
	}
	if d := treeDiff(applied, tree(t, ws)); d != "" {
		t.Fatal(d)
	}
	runProc(t, nil, "proposal", "revert", "--workspace", ws, prop)
	if code, _, _, errs := runProc(t, nil, "proposal", "reject", "--workspace", ws, prop); code != 0 {
		t.Fatalf("reject after the revert: %s", errs)
	}
	if st := proposalState(t, ws); st != "rejected" {
		t.Fatalf("after revert and reject the proposal is %s", st)
	}
}

// A proposal made again from its sandbox, unchanged, keeps its state; changed, it is pending,
// and its apply writes only what is new.
func TestCreateAgainKeepsTheStateOfAnUnchangedPatch(t *testing.T) {
	ws, prop, applied := tailProposal(t, 3)
	if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop); code != 0 {
		t.Fatal(errs)
	}
	create := []string{"proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "coder"}
	if code, _, _, errs := runProc(t, nil, create...); code != 0 {
		t.Fatal(errs)
	}
	if st := proposalState(t, ws); st != "applied" {
		t.Fatalf("made again from an unchanged sandbox, the applied proposal is %s", st)
	}
	if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop); code != exitFail || !strings.Contains(errs, "was applied already") {
		t.Fatalf("apply after the unchanged create: exit %d %s", code, errs)
	}
	// The worker goes on: one more line in one file.
	f, _ := os.OpenFile(filepath.Join(prop, "work/src/f01.txt"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("added 3\n")
	f.Close()
	runProc(t, nil, create...)
	if st := proposalState(t, ws); st != "pending" {
		t.Fatalf("made again from a changed sandbox, the proposal is %s", st)
	}
	if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop); code != 0 {
		t.Fatalf("apply of the changed proposal: %s", errs)
	}
	applied["src/f01.txt"] += "added 3\n"
	if d := treeDiff(applied, tree(t, ws)); d != "" {
		t.Fatalf("the changed proposal was not applied as the worker left it (once each line):\n%s", d)
	}
}

// onceAgent is both nodes of a manager_worker run: the manager assigns and accepts; the worker
// adds two lines at the end of a.txt in its sandbox (once: a resumed worker leaves them).
const onceAgent = `set -u
prompt=$(cat)
case "$AGENTCANVAS_ROLE" in
orchestrator)
	if grep -q "Review your team" <<<"$prompt"; then echo "ACCEPT all"; echo "METRIC: tests_passed=1"
	else echo "ASSIGN coder: add two lines"; fi ;;
*)
	grep -q 'added 1' a.txt || printf 'added 1\nadded 2\n' >> a.txt
	cat <<EOH
HANDOFF
Context:        once test
Goal:           two lines added
DoD:            a.txt has them
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/$AGENTCANVAS_AGENT_ID/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/$AGENTCANVAS_AGENT_ID/proposal/proposal.json
ChangedFiles:
  - a.txt
Tests:
  - (none)
Next:
  - review
EOH
	;;
esac
`

// A run killed at each step of its auto-apply, then resumed: the proposal is applied once
// (rolled back and applied again, or finished and not applied again), its lines once in the
// workspace, one apply in the ledger, and the proposal applied.
func TestResumeAfterAKillAtAutoApplyAppliesOnce(t *testing.T) {
	const orig = "one\ntwo\nthree\n"
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.sh")
	os.WriteFile(agent, []byte(onceAgent), 0o755)
	flowSrc := `version: 0.2
name: once
policy: {autoApply: true}
agents:
  - {id: lead, role: orchestrator, runtime: {kind: cli, backendId: command, command: [bash, ` + agent + `], cwdMode: workspace}}
  - {id: coder, role: worker, files: [a.txt], runtime: {kind: cli, backendId: command, command: [bash, ` + agent + `], cwdMode: agentHome}}
interactions:
  - id: build
    patternId: manager_worker
    edges:
      - {source: lead, target: coder, data: {topology: manager_worker, termination: {type: max_rounds, rounds: 1}}}
`
	kills := 0
	for k := 1; ; k++ {
		ws := t.TempDir()
		os.WriteFile(filepath.Join(ws, "a.txt"), []byte(orig), 0o644)
		os.MkdirAll(filepath.Join(ws, "flows"), 0o755)
		flow := filepath.Join(ws, "flows", "once.yaml")
		os.WriteFile(flow, []byte(flowSrc), 0o644)
		run := []string{"run", "--json", "--non-interactive", "--workspace", ws}
		code, killed, _, errs := runProc(t, []string{"AGENTCANVAS_TEST_KILL_AT_STEP=" + fmt.Sprint(k)}, append(run, flow)...)
		if !killed {
			if code != 0 {
				t.Fatalf("step %d: the run failed: %s", k, errs)
			}
			break
		}
		kills++
		runs, _ := os.ReadDir(filepath.Join(ws, ".agentcanvas/runs"))
		if len(runs) != 1 {
			t.Fatalf("step %d: %d runs", k, len(runs))
		}
		code, _, out, errs := runProc(t, nil, append(run, "--resume", runs[0].Name(), flow)...)
		if code != 0 {
			t.Fatalf("step %d: the resumed run failed: %s", k, errs)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != orig+"added 1\nadded 2\n" {
			t.Fatalf("step %d: after the resume a.txt is\n%s\nevents:\n%s", k, b, out)
		}
		if n := ledgerApplies(t, ws); n != 1 {
			t.Fatalf("step %d: %d applies in the ledger", k, n)
		}
		if st := proposalState(t, ws); st != "applied" {
			t.Fatalf("step %d: after the resume the proposal is %s\n%s", k, st, out)
		}
	}
	if kills < 5 {
		t.Fatalf("only %d kills: the kill switch did not reach the auto-apply's steps", kills)
	}
}

// Reverts of one apply, twice in turn and twice at once, and a revert racing an apply of the
// same proposal: each apply and revert happens once, and the workspace is what the ledger says.
func TestRevertsAndAppliesOfOneProposalRacing(t *testing.T) {
	ws, prop, applied := tailProposal(t, 5)
	before := tree(t, ws)
	apply := []string{"proposal", "apply", "--workspace", ws, prop}
	revert := []string{"proposal", "revert", "--workspace", ws, prop}
	if code, _, _, errs := runProc(t, nil, apply...); code != 0 {
		t.Fatal(errs)
	}
	runProc(t, nil, revert...)
	if code, _, _, errs := runProc(t, nil, revert...); code == 0 || !strings.Contains(errs, "no applied entry") {
		t.Fatalf("a second revert: %d %s", code, errs)
	}
	for i := range 4 {
		runProc(t, nil, apply...)
		codes, errs := together(t, revert, revert)
		if codes[0]+codes[1] != exitFail {
			t.Fatalf("trial %d: two reverts at once: %v\n%s", i, codes, strings.Join(errs, "\n"))
		}
		if d := treeDiff(before, tree(t, ws)); d != "" {
			t.Fatalf("trial %d: after two reverts at once:\n%s", i, d)
		}
		runProc(t, nil, apply...)
		codes, _ = together(t, revert, apply)
		want := before // the apply came first (refused: applied), then the revert
		if codes[0] == 0 && codes[1] == 0 {
			want = applied // the revert first, then the apply again
		}
		if d := treeDiff(want, tree(t, ws)); d != "" || (codes[0] != 0) {
			t.Fatalf("trial %d: a revert racing an apply (exit %v):\n%s", i, codes, d)
		}
		if n := ledgerApplies(t, ws); (n == 1) != (codes[1] == 0) {
			t.Fatalf("trial %d: %d applies in the ledger after %v", i, n, codes)
		}
		if codes[1] == 0 {
			runProc(t, nil, revert...)
		}
	}
}

// A revert killed at each of its steps: the next command finishes or rolls it back, and the
// workspace is all-applied or all-reverted with the ledger to match.
func TestRevertKilledAtEveryStepRecovers(t *testing.T) {
	counts := map[string]int{}
	for k := 1; ; k++ {
		ws, prop, applied := tailProposal(t, 4)
		before := tree(t, ws)
		for p := range applied {
			if _, ok := before[p]; ok && strings.HasSuffix(p, ".txt") {
				before[p] = "644:one\ntwo\nthree\nfour\n"
			}
		}
		if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop); code != 0 {
			t.Fatal(errs)
		}
		code, killed, _, errs := runProc(t, []string{"AGENTCANVAS_TEST_KILL_AT_STEP=" + fmt.Sprint(k)}, "proposal", "revert", "--workspace", ws, prop)
		if !killed {
			if code != 0 {
				t.Fatalf("step %d: the revert failed: %s", k, errs)
			}
			break
		}
		_, _, _, notice := runProc(t, nil, "proposal", "ledger", "--workspace", ws)
		if l := leftovers(t, ws); len(l) > 0 {
			t.Fatalf("step %d: left behind %v", k, l)
		}
		now := tree(t, ws)
		switch n := ledgerApplies(t, ws); {
		case treeDiff(applied, now) == "" && n == 1:
			counts["rolled back (applied)"]++
		case treeDiff(before, now) == "" && n == 0:
			counts["finished (reverted)"]++
		default:
			t.Fatalf("step %d: after recovery (%q) the workspace is neither applied nor reverted with the ledger to match (%d live applies)", k, notice, n)
		}
	}
	if counts["rolled back (applied)"] == 0 || counts["finished (reverted)"] == 0 {
		t.Fatalf("want both: %v", counts)
	}
	t.Logf("a revert killed at each step: %v", counts)
}

// An apply that read a proposal, then waited for the workspace lock while the proposal was
// made again (another patch), is refused with the lock: it would write the patch it read, and
// the status would say "applied" beside a patch it did not apply. The next apply applies the
// new patch.
func TestApplyOfAProposalMadeAgainWhileItWaitedIsRefused(t *testing.T) {
	ws, prop, _ := tailProposal(t, 3)
	first := copyDir(t, filepath.Join(prop, "proposal"))
	work := filepath.Join(prop, "work", "src", "f00.txt")
	f, _ := os.OpenFile(work, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("added 3\n")
	f.Close()
	if code, _, _, errs := runProc(t, nil, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "coder"); code != 0 {
		t.Fatal(errs)
	}
	second := copyDir(t, filepath.Join(prop, "proposal"))
	putDir(t, first, filepath.Join(prop, "proposal"))
	before := tree(t, ws)

	lk, err := wslock.Acquire(context.Background(), ws, "the test, making the proposal again", wslock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	apply := cli(nil, "proposal", "apply", "--workspace", ws, prop)
	stderr, _ := apply.StderrPipe()
	if err := apply.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.Contains(lines.Text(), "waiting for the workspace lock") {
	}
	putDir(t, second, filepath.Join(prop, "proposal")) // as proposal create writes it, with the lock
	os.Remove(filepath.Join(prop, "proposal", "status.json"))
	lk.Release()
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	apply.Wait()
	if code := apply.ProcessState.ExitCode(); code != exitFail || !strings.Contains(rest.String(), "was made again while this apply waited for the workspace lock (its patch changed)") {
		t.Fatalf("the apply of the patch it read: exit %d\n%s", code, rest.String())
	}
	if d := treeDiff(before, tree(t, ws)); d != "" {
		t.Fatalf("the refused apply changed the workspace:\n%s", d)
	}
	if st, n := proposalState(t, ws), ledgerApplies(t, ws); st != "pending" || n != 0 {
		t.Fatalf("after the refusal: %s, %d applies in the ledger", st, n)
	}
	if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop); code != 0 {
		t.Fatal(errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/f00.txt")); string(b) != "one\ntwo\nthree\nfour\nadded 1\nadded 2\nadded 3\n" {
		t.Fatalf("the new patch applied: %q", b)
	}
}

// copyDir reads every file of a folder (no subfolders).
func copyDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
			out[e.Name()] = b
		}
	}
	return out
}

// putDir writes files into dir, each by a rename (as the proposal's writer does).
func putDir(t *testing.T, files map[string][]byte, dir string) {
	t.Helper()
	for name, b := range files {
		tmp := filepath.Join(dir, "."+name+".new")
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// The status cannot be written past the commit point (status.json is a folder here, which no
// rename replaces, root or not): the apply stands and says so, the journal stays with what is
// left to write, and each later command tries again and says so, until one records it; the
// event is logged once.
func TestAStatusThatCannotBeWrittenIsWrittenByTheNextCommand(t *testing.T) {
	ws, prop, applied := tailProposal(t, 2)
	blocker := filepath.Join(prop, "proposal", "status.json")
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop)
	if code != 0 || !strings.Contains(errs, "could not record the status") || !strings.Contains(errs, "the journal stays") {
		t.Fatalf("the apply: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas/journal.json")); err != nil {
		t.Fatalf("the journal went with the status unwritten: %v", err)
	}
	code, _, _, errs = runProc(t, nil, "proposal", "apply", "--workspace", ws, prop)
	if code != exitFail || !strings.Contains(errs, "could not record the status") || !strings.Contains(errs, "was applied already") {
		t.Fatalf("the next apply: exit %d\n%s", code, errs)
	}
	os.RemoveAll(blocker)
	code, _, _, errs = runProc(t, nil, "proposal", "apply", "--workspace", ws, prop)
	if code != exitFail || !strings.Contains(errs, "was finished") || strings.Contains(errs, "could not record") {
		t.Fatalf("the apply after the folder went: exit %d\n%s", code, errs)
	}
	if st := proposalState(t, ws); st != "applied" {
		t.Fatalf("the proposal is %s", st)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas/journal.json")); err == nil {
		t.Fatal("the journal stayed")
	}
	if d := treeDiff(applied, tree(t, ws)); d != "" {
		t.Fatal(d)
	}
	logs, _ := filepath.Glob(filepath.Join(ws, ".agentcanvas/logs/*/*.jsonl"))
	n := 0
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		n += strings.Count(string(b), `"event":"proposal_applied"`)
	}
	if n != 1 {
		t.Fatalf("%d proposal_applied events in %v", n, logs)
	}
}
