package proposal

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// An editor that saves a file while the apply runs (after the check, before the file is
// replaced): the apply stops, names the file, puts back what it wrote, and the save stays.
func TestApplyChecksEachFileJustBeforeReplacingIt(t *testing.T) {
	ws, ref := richProposal(t)
	before := snapshot(t, ws, true)
	saved := "saved by the editor\n"
	hook := func(op Op, p string) error {
		if op == OpRename && p == "new/deep/n.txt" { // a file written before src/a.txt
			os.WriteFile(filepath.Join(ws, "src/a.txt"), []byte(saved), 0o644)
		}
		return nil
	}
	_, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Hook: hook})
	if err == nil || !strings.Contains(err.Error(), "src/a.txt: it changed while the apply ran") || !strings.Contains(err.Error(), "workspace restored") {
		t.Fatalf("got %v", err)
	}
	want := before
	want["src/a.txt"] = "F:644:" + saved
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.txt")); string(b) != saved {
		t.Fatalf("the editor's save was lost: %q", b)
	}
	after := snapshot(t, ws, true)
	after["src/a.txt"] = want["src/a.txt"]
	if d := diffSnapshots(want, after); d != "" {
		t.Fatalf("the other files were not put back:\n%s", d)
	}
	if lg, _ := ReadLedger(ws); len(lg.Entries) != 0 {
		t.Fatalf("a failed apply has a ledger entry: %+v", lg.Entries)
	}
	if _, err := os.Stat(filepath.Join(ws, journalFile)); err == nil {
		t.Fatal("a failed apply left its journal")
	}
}

// An apply whose ledger entry cannot be written does not happen.
func TestApplyWithoutItsLedgerEntryDoesNotHappen(t *testing.T) {
	ws, ref := richProposal(t)
	before := snapshot(t, ws, true)
	// The entries folder becomes a file once the workspace is written: the entry cannot be
	// written. (Before the apply it would be refused: a ledger that cannot be read cannot say
	// whether the proposal was applied already.)
	hook := func(op Op, _ string) error {
		if op == OpLedger {
			os.RemoveAll(filepath.Join(ws, ledgerEntries))
			os.WriteFile(filepath.Join(ws, ledgerEntries), []byte("in the way\n"), 0o644)
		}
		return nil
	}
	_, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Hook: hook})
	if err == nil || !strings.Contains(err.Error(), "its ledger entry could not be written") {
		t.Fatalf("got %v", err)
	}
	if d := diffSnapshots(before, snapshot(t, ws, true)); d != "" {
		t.Fatalf("the workspace changed:\n%s", d)
	}
}

// A journal whose "before" copy is gone (an object lost to a power cut): the recovery fails,
// naming the file, changes nothing and keeps the journal for the next try.
func TestRecoveryWithoutTheOldCopyNamesTheFile(t *testing.T) {
	ws := t.TempDir()
	now := []byte("new line\n")
	os.WriteFile(filepath.Join(ws, "a.txt"), now, 0o644)
	j := &journal{Version: journalVersion, What: "apply of coder's proposal (run r1)", Entry: &LedgerEntry{ID: "20261126T000000.000Z-0badc0de"},
		Files: []journalChange{{Path: "a.txt", Before: &LedgerBlob{OID: blobOID([]byte("old line\n")), Mode: "100644"}, After: &LedgerBlob{OID: blobOID(now), Mode: "100644"}}}}
	leaveJournal(t, ws, j)
	_, err := Recover(context.Background(), ws)
	if err == nil || !strings.Contains(err.Error(), "an interrupted apply of coder's proposal (run r1) could not be recovered") || !strings.Contains(err.Error(), "a.txt:") {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != string(now) {
		t.Fatal("a failed recovery changed a.txt")
	}
	if _, err := os.Stat(filepath.Join(ws, journalFile)); err != nil {
		t.Fatal("a failed recovery removed the journal")
	}
}

// A file the editor saves after the apply replaced it, when a later step then fails: the
// rollback leaves the save, says so, and every other file is put back.
func TestRollbackLeavesAFileSavedMeanwhile(t *testing.T) {
	ws, ref := richProposal(t)
	before := snapshot(t, ws, true)
	saved := "saved by the editor after the apply wrote it\n"
	hook := func(op Op, p string) error {
		if op == OpLedger {
			os.WriteFile(filepath.Join(ws, "src/a.txt"), []byte(saved), 0o644)
			return os.ErrPermission
		}
		return nil
	}
	_, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Hook: hook})
	if err == nil || !strings.Contains(err.Error(), "src/a.txt changed again during the apply; left as it is") {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.txt")); string(b) != saved {
		t.Fatalf("the save was lost: %q", b)
	}
	after := snapshot(t, ws, true)
	after["src/a.txt"] = before["src/a.txt"]
	kept := 0
	for p := range after {
		if isTempName(p) {
			delete(after, p) // the old version of src/a.txt, kept with the journal
			kept++
		}
	}
	if d := diffSnapshots(before, after); d != "" || kept != 1 {
		t.Fatalf("the other files were not put back (%d old versions kept):\n%s", kept, d)
	}
	// The journal stays; the next command names the file and leaves it.
	notice, err := Recover(context.Background(), ws)
	if err != nil || !strings.Contains(notice, "left as they are, changed again since: src/a.txt") {
		t.Fatalf("recovery: %q %v", notice, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.txt")); string(b) != saved {
		t.Fatalf("the recovery lost the save: %q", b)
	}
	after = snapshot(t, ws, true)
	after["src/a.txt"] = before["src/a.txt"]
	if d := diffSnapshots(before, after); d != "" {
		t.Fatalf("after the recovery:\n%s", d)
	}
}

// ApplyOptions.Accept decides on the apply's own check, with the workspace lock held: it sees
// the merge warning of a workspace changed since the proposal was made, and a reason it gives
// leaves the workspace and the ledger as they were. (Auto-apply's whenClean is decided so: a
// check and an apply taken apart would let another writer change the workspace in between.)
func TestAcceptDecidesOnTheApplysOwnCheck(t *testing.T) {
	ws := t.TempDir()
	a := filepath.Join(ws, "a.txt")
	putFile(t, a, numbered(40))
	c := worker(t, ws, "r1", "coder", []string{"a.txt"}, func(work string) {
		putFile(t, filepath.Join(work, "a.txt"), setLine(numbered(40), 2, "LINE 2 BY THE WORKER"))
	})
	ref := filepath.Join(c.AgentDir, JSONFile)
	putFile(t, a, setLine(numbered(40), 5, "edited by the person"))
	before := snapshot(t, ws, true)
	var seen []string
	hold := func(res *Result) string {
		// Another writer now would wait: the lock is held.
		_, err := wslock.Acquire(context.Background(), ws, "a second writer", wslock.Options{Timeout: time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "busy") {
			t.Errorf("the lock was free while Accept decided: %v", err)
		}
		seen = append(seen, res.Warnings...)
		return "the check warned"
	}
	_, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Accept: hold})
	var he *HeldError
	if !errors.As(err, &he) || he.Reason != "the check warned" {
		t.Fatalf("got %v", err)
	}
	if len(seen) == 0 || !strings.Contains(strings.Join(seen, "\n"), "merged with the workspace") {
		t.Fatalf("Accept saw the warnings %q, want the merge's", seen)
	}
	if d := diffSnapshots(before, snapshot(t, ws, true)); d != "" {
		t.Fatalf("a held apply changed the workspace:\n%s", d)
	}
	if lg, _ := ReadLedger(ws); len(lg.Entries) != 0 {
		t.Fatalf("a held apply has a ledger entry: %+v", lg.Entries)
	}
	res, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Accept: func(*Result) string { return "" }})
	if err != nil || !res.Applied || !slices.Contains(res.Merged, "a.txt") {
		t.Fatalf("accepted: %+v, %v", res, err)
	}
	if now, _ := os.ReadFile(a); !strings.Contains(string(now), "edited by the person\n") || !strings.Contains(string(now), "LINE 2 BY THE WORKER\n") {
		t.Fatalf("the merged apply lost a side:\n%s", now)
	}
}

// A file the check read whose stamp was settled (stamp.go) and which is then saved in place with
// the same size just before the apply replaces it: the new ctime gives the save away, and the
// apply stops and names the file. (The margin is 0 here, and the test waits for the file-time
// clock to tick past the file's ctime instead, so that the save cannot share its tick.)
func TestApplyNoticesASameSizeSaveOfASettledFile(t *testing.T) {
	defer func(m time.Duration) { stampMargin = m }(stampMargin)
	stampMargin = 0
	ws := t.TempDir()
	a := filepath.Join(ws, "a.txt")
	putFile(t, a, numbered(40))
	c := worker(t, ws, "r1", "coder", []string{"a.txt"}, func(work string) {
		putFile(t, filepath.Join(work, "a.txt"), setLine(numbered(40), 2, "LINE 2 BY THE WORKER"))
	})
	ctime := func(p string) int64 {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return stampOf(fi).ctime
	}
	probe := filepath.Join(t.TempDir(), "probe")
	for putFile(t, probe, "tick"); ctime(probe) <= ctime(a); putFile(t, probe, "tick") {
	}
	saved := setLine(numbered(40), 30, "LINE 30") // the same size
	hook := func(op Op, p string) error {
		if op == OpRename && p == "a.txt" {
			f, err := os.OpenFile(a, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			f.WriteString(saved)
		}
		return nil
	}
	_, err := Apply(context.Background(), ws, filepath.Join(c.AgentDir, JSONFile), Selection{}, ApplyOptions{Hook: hook})
	if err == nil || !strings.Contains(err.Error(), "a.txt: it changed while the apply ran") {
		t.Fatalf("got %v", err)
	}
	if got := readFile(t, a); got != saved {
		t.Fatalf("the save was lost: %q", got)
	}
}

// leaveJournal writes j as an apply cut short would have left it.
func leaveJournal(t *testing.T, ws string, j *journal) {
	t.Helper()
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := j.write(root); err != nil {
		t.Fatal(err)
	}
}

// On Linux a file is replaced by swapping two names in one step: until the apply stands, the
// old version is the very file under the temporary name the journal gave the new one (so a
// rollback needs no free space), and the apply leaves neither name behind.
func TestApplySwapsTheOldVersionOutUnderTheTempName(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("renameat2's RENAME_EXCHANGE is Linux's")
	}
	ws, ref := richProposal(t)
	orig, err := os.ReadFile(filepath.Join(ws, "src/a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var tmp string
	hook := func(op Op, p string) error {
		if op != OpLedger {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(ws, journalFile))
		if err != nil {
			return err
		}
		var j journal
		if err := json.Unmarshal(b, &j); err != nil {
			return err
		}
		for _, c := range j.Files {
			if c.Path == "src/a.txt" {
				tmp = c.Tmp
			}
		}
		kept, err := os.ReadFile(filepath.Join(ws, tmp))
		if err != nil {
			t.Errorf("the old version is not under %q: %v", tmp, err)
		} else if string(kept) != string(orig) {
			t.Errorf("%s holds %q, not the old version", tmp, kept)
		}
		return nil
	}
	if _, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Hook: hook}); err != nil {
		t.Fatal(err)
	}
	if tmp == "" {
		t.Fatal("the journal named no temporary file for src/a.txt")
	}
	if _, err := os.Lstat(filepath.Join(ws, tmp)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the apply left %s: %v", tmp, err)
	}
}
