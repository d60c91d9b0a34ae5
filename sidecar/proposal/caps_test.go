package proposal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An apply of 20,000 files: its ledger entry and journal are over the 4 MiB the ledger used to
// read back, and it is reverted byte for byte.
func TestTwentyThousandFilesApplyAndRevert(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	// The proposal is written as Create writes it (without the sandbox's two copies, which
	// this test does not need: the apply and the revert read the patch and the ledger).
	ws := t.TempDir()
	agentDir := filepath.Join(ws, ".agentcanvas/sandboxes/run1/coder")
	var patch []byte
	var changed []ChangedFile
	for i := range n {
		p := fmt.Sprintf("src/d%03d/f%05d.txt", i%200, i)
		changed = append(changed, ChangedFile{Path: p, Status: "modified"})
		old := fmt.Appendf(nil, "line one of file %d\nline two\nline three\nline four\n", i)
		writeTree(t, ws, map[string]string{p: "F:" + string(old)})
		secs, _, _, err := changeSections(p, side{exists: true, mode: modeFile, data: old}, side{exists: true, mode: modeFile, data: fmt.Appendf(nil, "LINE ONE of file %s\nline two\nline three\nline four\nadded\n", p)})
		if err != nil {
			t.Fatal(err)
		}
		patch = append(patch, secs[0]...)
	}
	pj, _ := json.Marshal(Proposal{Version: jsonVersion, RunID: "run1", AgentID: "coder", Paths: Paths{PatchFile: PatchFile}, ChangedFiles: changed})
	writeTree(t, agentDir, map[string]string{JSONFile: "F:" + string(pj), PatchFile: "F:" + string(patch)})
	before := snapshot(t, ws, true)
	res, err := Apply(context.Background(), ws, agentDir, Selection{}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(ws, entryPath(res.Ledger)))
	if err != nil {
		t.Fatal(err)
	}
	if !testing.Short() && fi.Size() <= 4<<20 {
		t.Fatalf("the entry is %d bytes: not over the old cap", fi.Size())
	}
	lg, err := ReadLedger(ws)
	if err != nil || len(lg.Entries) != 1 || len(lg.Entries[0].Files) != n {
		t.Fatalf("the ledger read back: %v", err)
	}
	if _, err := Revert(context.Background(), ws, res.Ledger, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(before, snapshot(t, ws, true)); d != "" {
		t.Fatalf("the revert did not restore the workspace:\n%.2000s", d)
	}
	t.Logf("%d files: a ledger entry of %s, read back and reverted", n, byteSize(fi.Size()))
}

// An apply whose ledger entry or journal would be over what its reader takes is refused by
// the check, saying why, and nothing is written.
func TestCheckRefusesAnApplyWhoseRecordsAreOverTheirCaps(t *testing.T) {
	old := maxRecordBytes
	defer func() { maxRecordBytes = old }()
	maxRecordBytes = 32 << 10
	tree := map[string]string{}
	for i := range 200 {
		tree[fmt.Sprintf("src/f%03d.txt", i)] = "F:one\ntwo\n"
	}
	ws, paths := prepared(t, tree)
	for p := range tree {
		os.WriteFile(filepath.Join(paths.WorkDir, p), []byte("ONE\ntwo\n"), 0o644)
	}
	if _, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, ws, false)
	for _, dry := range []bool{true, false} {
		_, err := Apply(context.Background(), ws, paths.AgentDir, Selection{}, ApplyOptions{DryRun: dry})
		if err == nil || !strings.Contains(err.Error(), "refused at check time: its ledger entry would be") || !strings.Contains(err.Error(), "it could not be reverted") {
			t.Fatalf("dry run %v: %v", dry, err)
		}
	}
	after := snapshot(t, ws, false)
	for p := range after {
		if strings.HasPrefix(p, ".agentcanvas/logs") || lockArtifact(p) {
			delete(after, p)
		}
	}
	for p := range before {
		if strings.HasPrefix(p, ".agentcanvas/logs") {
			delete(before, p)
		}
	}
	if d := diffSnapshots(before, after); d != "" {
		t.Fatalf("a refused apply wrote:\n%s", d)
	}
}

// What Create writes, its readers read back whole: a summary of very many files and a long
// test log are cut to what a review reads (and still read), a patch or proposal.json over
// their caps is refused before anything is written.
func TestCreateWritesWhatItsReadersTake(t *testing.T) {
	pr := &Proposal{RunID: "r", AgentID: "a", Notes: strings.Repeat("n", maxNotes+10)}
	stats := map[string]Stat{}
	for i := range 40000 {
		p := fmt.Sprintf("src/some/longer/folder/name/file%05d.txt", i)
		pr.ChangedFiles = append(pr.ChangedFiles, ChangedFile{Path: p, Status: "modified"})
		stats[p] = Stat{Added: 1}
	}
	pr.Notes = cutNotes(pr.Notes)
	if s := summaryMarkdown(pr, stats, nil); len(s) > maxSummaryBytes || !strings.Contains(s, "more files") {
		t.Fatalf("the summary is %d bytes", len(s))
	}
	if log := testLogTail([]byte(strings.Repeat("x", maxTestLogBytes+5000) + "FAILED\n")); len(log) > maxTestLogBytes || !strings.HasSuffix(string(log), "FAILED\n") {
		t.Fatalf("the test log is %d bytes", len(log))
	}
	if err := fitsItsReaders(pr, make([]byte, MaxPatchBytes+1)); err == nil || !strings.Contains(err.Error(), "the patch would be") {
		t.Fatalf("a patch over the cap: %v", err)
	}
	for i := range 60000 {
		pr.ChangedFiles = append(pr.ChangedFiles, ChangedFile{Path: fmt.Sprintf("more/file%06d.txt", i), Status: "added"})
	}
	if err := fitsItsReaders(pr, nil); err == nil || !strings.Contains(err.Error(), "proposal.json would be") {
		t.Fatalf("a proposal.json over the cap: %v", err)
	}
}

// A version already in the ledger whose stored copy is damaged is stored again by the next
// apply that names it, rather than reused: that apply can be reverted.
func TestADamagedStoredCopyIsStoredAgain(t *testing.T) {
	ws := t.TempDir()
	putFile(t, filepath.Join(ws, "a.txt"), "the original\n")
	worker(t, ws, "r1", "w1", []string{"a.txt"}, func(work string) { putFile(t, filepath.Join(work, "a.txt"), "the change\n") })
	ref := agentRef(ws, "r1", "w1")
	ctx := context.Background()
	for _, step := range []func() error{
		func() error { _, err := Apply(ctx, ws, ref, Selection{}, ApplyOptions{}); return err },
		func() error { _, err := Revert(ctx, ws, ref, ApplyOptions{}); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	// Damage the original's copy in the pack.
	root, _ := os.OpenRoot(ws)
	objs := openObjects(root)
	oid := blobOID([]byte("the original\n"))
	objs.load()
	e := objs.index[oid]
	objs.close()
	root.Close()
	pack, _ := os.OpenFile(filepath.Join(ws, packFile), os.O_WRONLY, 0)
	pack.WriteAt([]byte("X"), e.off)
	pack.Close()
	if _, err := Apply(ctx, ws, ref, Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Revert(ctx, ws, ref, ApplyOptions{}); err != nil {
		t.Fatalf("the apply reused the damaged copy: %v", err)
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "the original\n" {
		t.Fatalf("reverted to %q", got)
	}
}

// A journal is a file in the workspace: one naming a path no apply writes (.git/hooks/…) is
// refused by the recovery, which touches nothing; an index line naming more bytes than the
// pack holds is refused by the read, which allocates nothing for it.
func TestForgedRecordsAreRefused(t *testing.T) {
	ws := t.TempDir()
	hook := filepath.Join(ws, ".git/hooks/pre-commit")
	putFile(t, hook, "#!/bin/sh\necho mine\n")
	j := &journal{Version: journalVersion, What: "apply of a patch", Files: []journalChange{
		{Path: ".git/hooks/pre-commit", Before: &LedgerBlob{OID: blobOID([]byte("#!/bin/sh\ncurl evil\n")), Mode: "100755"}, After: &LedgerBlob{OID: blobOID([]byte("#!/bin/sh\necho mine\n")), Mode: "100644"}},
	}}
	leaveJournal(t, ws, j)
	if _, err := Recover(context.Background(), ws); err == nil || !strings.Contains(err.Error(), `it names the path ".git/hooks/pre-commit", which no apply writes`) {
		t.Fatalf("a forged journal: %v", err)
	}
	if got := readFile(t, hook); got != "#!/bin/sh\necho mine\n" {
		t.Fatalf("the hook was changed: %q", got)
	}

	os.MkdirAll(filepath.Join(ws, ledgerObjects), 0o755)
	os.WriteFile(filepath.Join(ws, packFile), []byte("tiny"), 0o644)
	oid := blobOID([]byte("x"))
	os.WriteFile(filepath.Join(ws, packIndex), fmt.Appendf(nil, "%s 0 %d\n", oid, 1<<29), 0o644)
	if _, err := ReadLedgerObject(ws, &LedgerBlob{OID: oid, Mode: "100644"}); err == nil || !strings.Contains(err.Error(), "the pack ends before it") {
		t.Fatalf("an index line past the pack: %v", err)
	}
}
