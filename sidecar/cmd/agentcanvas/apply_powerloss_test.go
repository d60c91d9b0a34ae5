//go:build unix

package main

// A power loss in the middle of an apply, through real processes: the apply is killed at each
// of its steps, and the ledger's pack (synced only at the commit point) loses what the apply
// appended to it before that, as the page cache would after a power cut. The next command's
// recovery must still end all-old (from the old versions the apply kept beside the files or
// under .agentcanvas/tmp) or all-new, never remove a copy it needs first, and the apply must
// then revert byte for byte.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPowerLossWithALostPackTailRecovers(t *testing.T) {
	const files = 4
	counts := map[string]int{}
	for k := 1; ; k++ {
		ws, prop, before, after := faultWorkspace(t, files)
		code, killed, _, errs := runProc(t, []string{"AGENTCANVAS_TEST_KILL_AT_STEP=" + fmt.Sprint(k)}, "proposal", "apply", "--workspace", ws, prop)
		if code == 0 {
			break
		}
		if !killed {
			t.Fatalf("step %d: the apply failed instead of being killed: %s", k, errs)
		}
		// The power cut: everything the apply appended to the pack is gone (a fresh workspace:
		// the whole pack), its index lines too, unless the apply reached its commit point,
		// before which it syncs them.
		if entries, _ := os.ReadDir(filepath.Join(ws, ".agentcanvas/ledger/entries")); len(entries) == 0 {
			os.Truncate(filepath.Join(ws, ".agentcanvas/ledger/objects/pack"), 0)
			os.Truncate(filepath.Join(ws, ".agentcanvas/ledger/objects/pack.idx"), 0)
		}
		applied, notice := recoverAndCheck(t, ws, prop, before, after)
		switch {
		case applied:
			counts["finished"]++
		case strings.Contains(notice, "rolled back"):
			counts["rolled back"]++
		default:
			counts["nothing to do"]++
		}
	}
	if counts["rolled back"] == 0 || counts["finished"] == 0 {
		t.Fatalf("want both rollbacks and finished applies: %v", counts)
	}
	t.Logf("a power cut at each step, the pack's tail lost: %v, 0 files lost", counts)
}

// When neither the ledger nor the apply kept a whole copy of a file's old version, the
// recovery cannot finish: it removes nothing, leaves that file as the apply wrote it, says what
// it kept, and keeps the journal for the next try (which says the same again).
func TestUnfinishableRecoveryKeepsEveryCopy(t *testing.T) {
	for k := 1; k < 60; k++ {
		ws, prop, before, after := faultWorkspace(t, 4)
		if _, killed, _, _ := runProc(t, []string{"AGENTCANVAS_TEST_KILL_AT_STEP=" + fmt.Sprint(k)}, "proposal", "apply", "--workspace", ws, prop); !killed {
			t.Fatal("the apply ended before two files were in place")
		}
		now := tree(t, ws)
		var placed []string
		for p, v := range now {
			if before[p] != "" && after[p] != before[p] && v == after[p] && strings.HasSuffix(p, ".txt") {
				placed = append(placed, p)
			}
		}
		if len(placed) < 2 {
			continue
		}
		// The power cut took the pack, and the old version kept beside one file.
		lostFile := placed[0]
		var lostCopy string
		for p, v := range now {
			if filepath.Dir(p) == filepath.Dir(lostFile) && strings.Contains(p, ".agentcanvas-") && v == before[lostFile] {
				lostCopy = p
			}
		}
		if lostCopy == "" {
			t.Fatalf("step %d: %s is in place, but its old version is not beside it", k, lostFile)
		}
		os.Remove(filepath.Join(ws, lostCopy))
		os.Truncate(filepath.Join(ws, ".agentcanvas/ledger/objects/pack"), 0)
		for try := range 2 {
			code, _, _, errs := runProc(t, nil, "proposal", "ledger", "--workspace", ws)
			if code == 0 || !strings.Contains(errs, lostFile+": no whole copy of its old version is left") ||
				!strings.Contains(errs, "kept, for the next try: the journal .agentcanvas/journal.json") {
				t.Fatalf("step %d, try %d: an unfinishable recovery: exit %d\n%s", k, try, code, errs)
			}
			if _, err := os.Stat(filepath.Join(ws, ".agentcanvas/journal.json")); err != nil {
				t.Fatalf("try %d: the journal was removed", try)
			}
			got := tree(t, ws)
			if got[lostFile] != after[lostFile] {
				t.Fatalf("try %d: %s, whose old version is lost, was changed: the apply's version is its only copy", try, lostFile)
			}
			for _, p := range placed[1:] {
				if got[p] != before[p] {
					t.Fatalf("try %d: %s, whose old version was kept, was not put back", try, p)
				}
			}
		}
		return
	}
	t.Fatal("no step had two files in place")
}
