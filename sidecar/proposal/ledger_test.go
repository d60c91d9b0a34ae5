package proposal

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// Apply A then B (different lines of one file), revert A: the file is byte for byte the
// workspace with only B applied. The ledger records each step; reverting again is refused.
func TestRevertLeavesLaterApplies(t *testing.T) {
	ws := t.TempDir()
	orig := numbered(20)
	putFile(t, filepath.Join(ws, "a.txt"), orig)
	putFile(t, filepath.Join(ws, "other.txt"), "unrelated\n")
	worker(t, ws, "r1", "A", []string{"a.txt"}, func(work string) {
		putFile(t, filepath.Join(work, "a.txt"), setLine(orig, 2, "A's line"))
		putFile(t, filepath.Join(work, "new-by-A.txt"), "A adds a file\n")
	})
	worker(t, ws, "r1", "B", []string{"a.txt"}, func(work string) {
		putFile(t, filepath.Join(work, "a.txt"), setLine(orig, 15, "B's line"))
	})
	// The workspace with only B applied, for comparison.
	onlyB := t.TempDir()
	putFile(t, filepath.Join(onlyB, "a.txt"), orig)
	if _, err := ApplyPatch(context.Background(), onlyB, []byte(readFile(t, filepath.Join(ws, sandbox.Dir, "r1", "B", PatchFile))), Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := Apply(ctx, ws, agentRef(ws, "r1", "A"), Selection{}, ApplyOptions{})
	if err != nil || a.Ledger == "" {
		t.Fatalf("apply A: %v %+v", err, a)
	}
	if _, err := Apply(ctx, ws, agentRef(ws, "r1", "B"), Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// A check changes nothing.
	before := snapshot(t, ws, true)
	if res, err := Revert(ctx, ws, a.Ledger, ApplyOptions{DryRun: true}); err != nil || res.Applied {
		t.Fatalf("revert --check: %v %+v", err, res)
	}
	if d := diffSnapshots(before, snapshot(t, ws, true)); d != "" {
		t.Fatalf("a revert check changed the workspace:\n%s", d)
	}
	// By the proposal's folder: its latest apply.
	res, err := Revert(ctx, ws, filepath.Join(ws, sandbox.Dir, "r1", "A"), ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, filepath.Join(ws, "a.txt")), readFile(t, filepath.Join(onlyB, "a.txt")); got != want {
		t.Errorf("after the revert:\n%q\nwant (only B applied):\n%q", got, want)
	}
	if _, err := os.Stat(filepath.Join(ws, "new-by-A.txt")); !os.IsNotExist(err) {
		t.Error("the file A added is still there")
	}
	if readFile(t, filepath.Join(ws, "other.txt")) != "unrelated\n" {
		t.Error("an unrelated file changed")
	}
	lg, err := ReadLedger(ws)
	if err != nil || len(lg.Entries) != 3 || lg.Entries[2].Kind != "revert" || lg.Entries[2].Reverts != a.Ledger || lg.Reverted[a.Ledger] != res.Ledger {
		t.Fatalf("ledger %+v %v", lg, err)
	}
	e := lg.Entries[0]
	if e.RunID != "r1" || e.AgentID != "A" || e.Proposal != ".agentcanvas/sandboxes/r1/A/proposal/proposal.json" || len(e.Files) != 2 ||
		e.Files[0].Path != "a.txt" || e.Files[0].Hunks[0] != (LedgerHunk{OldStart: 2, OldLines: 1, NewStart: 2, NewLines: 1}) || e.Files[1].Status != "added" {
		t.Errorf("entry %+v", e)
	}
	if st := readState(filepath.Join(ws, sandbox.Dir, "r1", "A")); st != "reverted" {
		t.Errorf("A's state is %s", st)
	}
	if _, err := Revert(ctx, ws, a.Ledger, ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "reverted already") {
		t.Errorf("a second revert: %v", err)
	}
}

// A revert whose lines were changed since is refused, naming them, and writes nothing.
func TestRevertRefusedWhenLinesChanged(t *testing.T) {
	ws := t.TempDir()
	orig := numbered(10)
	putFile(t, filepath.Join(ws, "a.txt"), orig)
	worker(t, ws, "r1", "A", []string{"a.txt"}, func(work string) { putFile(t, filepath.Join(work, "a.txt"), setLine(orig, 5, "A")) })
	ctx := context.Background()
	a, err := Apply(ctx, ws, agentRef(ws, "r1", "A"), Selection{}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edited := setLine(setLine(orig, 5, "A, edited by hand"), 1, "first")
	putFile(t, filepath.Join(ws, "a.txt"), edited)
	_, err = Revert(ctx, ws, a.Ledger, ApplyOptions{})
	var ref *RefusedError
	if !errors.As(err, &ref) || !strings.Contains(err.Error(), "a.txt: the revert does not apply: line 5 of the file changed since the apply") {
		t.Fatalf("revert: %v", err)
	}
	if readFile(t, filepath.Join(ws, "a.txt")) != edited {
		t.Error("a refused revert changed the file")
	}
	lg, _ := ReadLedger(ws)
	if len(lg.Entries) != 1 {
		t.Errorf("a refused revert was recorded: %+v", lg.Entries)
	}
}

// Each line an agent wrote is credited to its apply, through later applies and edits.
func TestLineOrigins(t *testing.T) {
	ws := t.TempDir()
	orig := numbered(12)
	putFile(t, filepath.Join(ws, "a.txt"), orig)
	worker(t, ws, "r1", "A", []string{"a.txt"}, func(work string) {
		putFile(t, filepath.Join(work, "a.txt"), strings.Replace(orig, "line 3\n", "A one\nA two\n", 1))
	})
	worker(t, ws, "r2", "B", []string{"a.txt"}, func(work string) { putFile(t, filepath.Join(work, "a.txt"), setLine(orig, 10, "B's")) })
	// A run recorded where A came from.
	origin := Origin{Flow: "team", InteractionID: "i1", Round: 2, Backend: "claude", Prompt: "Fix the parser", InputTokens: 10, OutputTokens: 5, CostUSD: 0.01, CostKnown: true}
	ob, _ := json.Marshal(origin)
	putFile(t, filepath.Join(ws, sandbox.Dir, "r1", "A", originFile), string(ob))
	ctx := context.Background()
	for _, w := range []string{filepath.Join("r1", "A"), filepath.Join("r2", "B")} {
		if _, err := Apply(ctx, ws, filepath.Join(ws, sandbox.Dir, w), Selection{}, ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	now := readFile(t, filepath.Join(ws, "a.txt"))
	got, err := LineOrigins(ws, "a.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Start != 3 || got[0].Count != 2 || got[0].AgentID != "A" || got[0].Origin == nil || !reflect.DeepEqual(*got[0].Origin, origin) ||
		got[1].Start != 11 || got[1].Count != 1 || got[1].AgentID != "B" || got[1].RunID != "r2" {
		t.Fatalf("origins %+v", got)
	}
	// The editor's text: two lines typed at the top, A's second line edited: the rest follows.
	edited := "typed\ntyped\n" + strings.Replace(now, "A two\n", "A two, edited\n", 1)
	got, err = LineOrigins(ws, "a.txt", []byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Start != 5 || got[0].Count != 1 || got[0].AgentID != "A" || got[1].Start != 13 || got[1].AgentID != "B" {
		t.Fatalf("origins after edits %+v", got)
	}
	if _, err := LineOrigins(ws, "../etc/passwd", nil); err == nil {
		t.Error("a path out of the workspace was read")
	}
}

// The ledger is a file in the workspace: a name in it gets every rule a patch's name does.
func TestRevertRefusesLedgerNamesOutOfTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	putFile(t, filepath.Join(ws, "a.txt"), "one\n")
	worker(t, ws, "r1", "A", []string{"a.txt"}, func(work string) { putFile(t, filepath.Join(work, "a.txt"), "ONE\n") })
	ctx := context.Background()
	a, err := Apply(ctx, ws, agentRef(ws, "r1", "A"), Selection{}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(ws, ledgerEntries, a.Ledger+".json")
	for _, bad := range []string{"../outside.txt", ".git/config", "/etc/passwd", "a/../a.txt"} {
		b := strings.Replace(readFile(t, entry), `"path": "a.txt"`, `"path": `+strconv.Quote(bad), 1)
		putFile(t, entry, b)
		_, err := Revert(ctx, ws, a.Ledger, ApplyOptions{})
		if err == nil || !strings.Contains(err.Error(), "the ledger names this path") {
			t.Errorf("%s: %v", bad, err)
		}
		putFile(t, entry, strings.Replace(b, `"path": `+strconv.Quote(bad), `"path": "a.txt"`, 1))
	}
	if readFile(t, filepath.Join(ws, "a.txt")) != "ONE\n" {
		t.Error("a refused revert changed the workspace")
	}
	for id, ok := range map[string]bool{a.Ledger: true, "20260219T101500.123Z-1a2b3c4d": true, "../x": false, "20260219T101500.123Z-1a2b3c4": false, "x-1a2b3c4d": false} {
		if ValidLedgerID(id) != ok {
			t.Errorf("ValidLedgerID(%q) = %v", id, !ok)
		}
	}
}
