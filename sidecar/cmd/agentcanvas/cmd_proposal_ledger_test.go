package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two workers on one line from the command line: the conflict said at create, the merge's
// conflict settled with --resolve after the first apply, the ledger listed, each line's origin,
// and the first apply reverted.
func TestProposalMergeLedgerRevertCommands(t *testing.T) {
	ws := t.TempDir()
	orig := "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte(orig), 0o644)
	propose := func(agent, edited string) string {
		t.Helper()
		code, out, errs := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", agent, "a.txt")
		if code != exitOK {
			t.Fatalf("prepare %s: %s", agent, errs)
		}
		var paths map[string]string
		json.Unmarshal([]byte(out), &paths)
		os.WriteFile(filepath.Join(paths["workDir"], "a.txt"), []byte(edited), 0o644)
		code, _, errs = runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", agent)
		if code != exitOK {
			t.Fatalf("create %s: %s", agent, errs)
		}
		return errs
	}
	if errs := propose("w1", strings.Replace(orig, "two\n", "TWO (w1)\n", 1)); !strings.Contains(errs, "no conflict with the other open proposals") {
		t.Errorf("w1's create says %q", errs)
	}
	errs := propose("w2", strings.Replace(strings.Replace(orig, "two\n", "TWO (w2)\n", 1), "seven\n", "SEVEN\n", 1))
	if !strings.Contains(errs, "conflict: a.txt: Line 2 overlaps line 2 changed by w1 (run r1)") {
		t.Errorf("w2's create says %q", errs)
	}
	w1 := filepath.Join(ws, ".agentcanvas/sandboxes/r1/w1")
	w2 := filepath.Join(ws, ".agentcanvas/sandboxes/r1/w2")
	if code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, w1); code != exitOK {
		t.Fatalf("apply w1: %s", errs)
	}
	// Everything: refused with the conflict named.
	if code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, w2); code != exitFail || !strings.Contains(errs, "refused: a.txt: hunk 1 of the merge: conflicts with the workspace's line 2") ||
		!strings.Contains(errs, "TAKE one of mine, theirs, both, markers or @FILE") || strings.Contains(errs, "edit") { // the hint offers the command line's values
		t.Fatalf("apply w2: %d %s", code, errs)
	}
	// Bad merge flags are usage errors.
	for _, bad := range [][]string{{"--resolve", "a.txt:1"}, {"--resolve", "a.txt:1=sometimes"}, {"--merge", "a.txt"}, {"--against", "a.txt"}} {
		if code, _, _ := runCLI(t, append(append([]string{"proposal", "apply", "--workspace", ws}, bad...), w2)...); code != exitUsage {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
	edit := filepath.Join(t.TempDir(), "two.txt")
	os.WriteFile(filepath.Join(edit), []byte("two, by hand\n"), 0o644)
	if code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, "--merge", "a.txt:2", "--resolve", "a.txt:1=@"+edit, w2); code != exitOK {
		t.Fatalf("apply w2 resolved: %s", errs)
	}
	want := strings.Replace(strings.Replace(orig, "two\n", "two, by hand\n", 1), "seven\n", "SEVEN\n", 1)
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != want {
		t.Fatalf("a.txt:\n%s", b)
	}
	code, out, _ := runCLI(t, "proposal", "ledger", "--workspace", ws)
	if code != exitOK || strings.Count(out, "\n") != 2 || !strings.Contains(out, " apply w1 (run r1): modified a.txt") {
		t.Fatalf("ledger: %s", out)
	}
	code, out, _ = runCLI(t, "proposal", "origins", "--workspace", ws, "a.txt")
	if code != exitOK || !strings.Contains(out, "line 2: w2 (run r1)") || !strings.Contains(out, "line 7: w2 (run r1)") {
		t.Fatalf("origins: %s", out)
	}
	// Revert w2 by its folder: its lines go, the file is as w1 left it.
	if code, out, errs := runCLI(t, "proposal", "revert", "--workspace", ws, w2); code != exitOK || !strings.Contains(out, "reverted modified a.txt") {
		t.Fatalf("revert: %d %s %s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != strings.Replace(orig, "two\n", "TWO (w1)\n", 1) {
		t.Fatalf("after the revert:\n%s", b)
	}
	if code, _, errs := runCLI(t, "proposal", "revert", "--workspace", ws, "nonsense"); code != exitFail || !strings.Contains(errs, "no applied entry") {
		t.Errorf("revert nonsense: %d %s", code, errs)
	}
	if code, out, _ := runCLI(t, "proposal", "list", "--json", "--workspace", ws); code != exitOK || !strings.Contains(out, `"state": "reverted"`) {
		t.Errorf("list: %s", out)
	}
}
