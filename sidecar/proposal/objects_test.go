package proposal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openTestObjects(t *testing.T, ws string) *objects {
	t.Helper()
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	objs := openObjects(root)
	t.Cleanup(objs.close)
	return objs
}

func textSide(s string) side { return side{exists: true, mode: modeFile, data: []byte(s)} }

// readBack reads every version through a fresh store (as the next command would).
func readBack(t *testing.T, ws string, versions ...string) {
	t.Helper()
	objs := openTestObjects(t, ws)
	for _, v := range versions {
		got, err := objs.read(&LedgerBlob{OID: blobOID([]byte(v)), Mode: "100644"})
		if err != nil || string(got.data) != v {
			t.Fatalf("reading %q back: %q, %v", v, got.data, err)
		}
	}
}

// Each version is stored once: a second apply naming it adds nothing to the pack.
func TestLedgerObjectsAreWrittenOnce(t *testing.T) {
	ws := t.TempDir()
	if err := openTestObjects(t, ws).add([]side{textSide("one\n"), textSide("two\n"), textSide("one\n"), {}}); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(filepath.Join(ws, filepath.FromSlash(packFile)))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if got := size(); got != int64(len("one\ntwo\n")) {
		t.Fatalf("pack of %d bytes, want each version once (8)", got)
	}
	if err := openTestObjects(t, ws).add([]side{textSide("two\n"), textSide("one\n")}); err != nil {
		t.Fatal(err)
	}
	if got := size(); got != 8 {
		t.Fatalf("storing the same versions again grew the pack to %d bytes", got)
	}
	readBack(t, ws, "one\n", "two\n")
}

// A writer killed in the middle of an append leaves bytes at the pack's end and a line cut
// short at the index's end. A line cut short is never trusted (here it names the right id with
// the wrong size), the next writer appends after both, and every version reads back.
func TestLedgerObjectsSurviveAnAppendCutShort(t *testing.T) {
	ws := t.TempDir()
	if err := openTestObjects(t, ws).add([]side{textSide("kept\n")}); err != nil {
		t.Fatal(err)
	}
	cut := "cut short by the kill\n"
	appendTo := func(name, s string) {
		f, err := os.OpenFile(filepath.Join(ws, filepath.FromSlash(name)), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(packFile, cut[:7])
	appendTo(packIndex, fmt.Sprintf("%s 5 7", blobOID([]byte(cut)))) // no newline: cut short
	if err := openTestObjects(t, ws).add([]side{textSide(cut), textSide("later\n")}); err != nil {
		t.Fatal(err)
	}
	idx, _ := os.ReadFile(filepath.Join(ws, filepath.FromSlash(packIndex)))
	if lines := strings.Split(strings.TrimSuffix(string(idx), "\n"), "\n"); len(lines) != 3 {
		t.Fatalf("the index should hold 3 whole lines, the cut one dropped:\n%s", idx)
	}
	readBack(t, ws, "kept\n", cut, "later\n")
}

// A copy changed on disk is reported as damaged, never returned.
func TestLedgerObjectDamageIsReported(t *testing.T) {
	ws := t.TempDir()
	if err := openTestObjects(t, ws).add([]side{textSide("original\n")}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(ws, filepath.FromSlash(packFile))
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, []byte("0riginal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := openTestObjects(t, ws).read(&LedgerBlob{OID: blobOID([]byte("original\n")), Mode: "100644"})
	if err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Fatalf("got %v", err)
	}
}

// Ledgers written before the pack kept a file per version; those still read, and a revert of
// such an apply works.
func TestLooseLedgerObjectsStillRead(t *testing.T) {
	ws := t.TempDir()
	old, cur := "before the apply\n", "after the apply\n"
	for _, v := range []string{old, cur} {
		oid := blobOID([]byte(v))
		p := filepath.Join(ws, filepath.FromSlash(objectPath(oid)))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(v), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	readBack(t, ws, old, cur)
	e := LedgerEntry{Version: ledgerVersion, ID: "20261126T000000.000Z-0badc0de", Kind: "apply", At: "2026-11-26T00:00:00.000Z",
		Files: []LedgerFile{ledgerFile("a.txt", textSide(old), textSide(cur))}}
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := writeEntry(root, &e); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte(cur), 0o644)
	if _, err := Revert(context.Background(), ws, e.ID, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != old {
		t.Fatalf("reverted to %q", b)
	}
}

// Recovery removes the temporary files the journal names beside the files, and nothing else:
// a journal that names a file of the person's (or one in another folder) as a temporary file
// does not get it removed.
func TestRecoveryRemovesOnlyItsOwnTemporaryFiles(t *testing.T) {
	ws := t.TempDir()
	tmp := "src/.agentcanvas-0123456789abcdef.tmp"
	writeTree(t, ws, map[string]string{"src/a.txt": "F:mine\n", "src/b.txt": "F:mine too\n", tmp: "F:half written", "other/.agentcanvas-fedcba9876543210.tmp": "F:someone's"})
	a := blobOID([]byte("mine\n"))
	b := blobOID([]byte("mine too\n"))
	j := &journal{Version: journalVersion, What: "apply of a patch", Files: []journalChange{
		{Path: "src/a.txt", Before: &LedgerBlob{OID: a, Mode: "100644"}, After: &LedgerBlob{OID: blobOID([]byte("new\n")), Mode: "100644"}, Tmp: tmp},
		{Path: "src/b.txt", Before: &LedgerBlob{OID: b, Mode: "100644"}, After: &LedgerBlob{OID: blobOID([]byte("new\n")), Mode: "100644"}, Tmp: "src/a.txt"},
		{Path: "src/c.txt", After: &LedgerBlob{OID: blobOID([]byte("new\n")), Mode: "100644"}, Tmp: "other/.agentcanvas-fedcba9876543210.tmp"},
	}}
	leaveJournal(t, ws, j)
	notice, err := Recover(context.Background(), ws)
	if err != nil || !strings.Contains(notice, "was rolled back") {
		t.Fatalf("recovery: %q, %v", notice, err)
	}
	got := snapshot(t, ws, true)
	want := map[string]string{"src": "D:755", "other": "D:755", "src/a.txt": "F:644:mine\n", "src/b.txt": "F:644:mine too\n", "other/.agentcanvas-fedcba9876543210.tmp": "F:644:someone's"}
	if d := diffSnapshots(want, got); d != "" {
		t.Fatalf("after recovery:\n%s", d)
	}
}

// A file the apply deleted comes back from a revert with the permission bits it had: a 0600
// file must not come back readable by all (the ledger's mode alone says only 644 or 755).
func TestRevertKeepsTheDeletedFilesPermissionBits(t *testing.T) {
	ws := t.TempDir()
	secret := filepath.Join(ws, "config/secret.env")
	putFile(t, secret, "TOKEN=mine\n")
	if err := os.Chmod(secret, 0o600); err != nil {
		t.Fatal(err)
	}
	c := worker(t, ws, "r1", "coder", []string{"config"}, func(work string) {
		if err := os.Remove(filepath.Join(work, "config/secret.env")); err != nil {
			t.Fatal(err)
		}
	})
	res, err := Apply(context.Background(), ws, filepath.Join(c.AgentDir, JSONFile), Selection{}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(secret); !os.IsNotExist(err) {
		t.Fatalf("the apply did not delete the file: %v", err)
	}
	if _, err := Revert(context.Background(), ws, res.Ledger, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(secret)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the reverted file is %o, want 600", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(secret); string(b) != "TOKEN=mine\n" {
		t.Fatalf("reverted to %q", b)
	}
}

// An apply killed while it wrote the proposal's status (past its commit point) left the status's
// temporary file beside it: the recovery that finishes the apply removes it.
func TestRecoveryRemovesACutShortStatusWrite(t *testing.T) {
	ws := t.TempDir()
	putFile(t, filepath.Join(ws, "a.txt"), "old\n")
	c := worker(t, ws, "r1", "coder", []string{"a.txt"}, func(work string) { putFile(t, filepath.Join(work, "a.txt"), "new\n") })
	res, err := Apply(context.Background(), ws, filepath.Join(c.AgentDir, JSONFile), Selection{}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(ws, filepath.Join(c.AgentDir, JSONFile))
	left := filepath.Join(c.AgentDir, "proposal", ".agentcanvas-0123456789abcdef.tmp")
	putFile(t, left, `{"state": "appl`)
	e := res.Ledger
	leaveJournal(t, ws, &journal{Version: journalVersion, What: "apply of coder's proposal (run r1)", Entry: &LedgerEntry{ID: e},
		Finish: &journalFinish{Proposal: filepath.ToSlash(rel), Event: "proposal_applied", Fields: map[string]any{}, Status: &Status{State: "applied", Files: []string{"a.txt"}}}})
	notice, err := Recover(context.Background(), ws)
	if err != nil || !strings.Contains(notice, "was finished") {
		t.Fatalf("recovery: %q, %v", notice, err)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Fatalf("the cut-short status write is still there: %v", err)
	}
}
