//go:build unix

package snapshot

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// write makes files under dir: path → content ("->target" makes a symlink, a trailing "*" in
// the path an executable).
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, "*") {
			p, mode = strings.TrimSuffix(p, "*"), 0o755
		}
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(full)
		if target, ok := strings.CutPrefix(c, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(full, mode)
	}
}

// read is every file and link under dir: path → content, "->target" for a link, "*" marking
// an executable.
func read(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			out[rel] = "->" + target
			return nil
		}
		b, err := os.ReadFile(p)
		fi, _ := d.Info()
		if fi.Mode()&0o111 != 0 {
			rel += "*"
		}
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// settle waits until every file under dir changed longer ago than the racy margin, so a Take
// trusts their stamps: a condition on the clock, not a fixed sleep.
func settle(t *testing.T, dir string) {
	t.Helper()
	var sts []stamp
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		var st syscall.Stat_t
		if err == nil && syscall.Lstat(p, &st) == nil {
			sts = append(sts, stamp{mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()})
		}
		return nil
	})
	for _, st := range sts {
		for !st.settledBy(time.Now()) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func newStore(t *testing.T, ws, writer string) *Store {
	t.Helper()
	s, err := Open(ws, writer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func equal(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d paths, want %d:\n got %v\nwant %v", what, len(got), len(want), got, want)
		return
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %s = %q, want %q", what, p, got[p], w)
		}
	}
}

// A snapshot's tree is the tree real git writes for the same folder, and a checkout of it
// gives back every file, link and executable bit.
func TestTakeMatchesGitAndChecksOut(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	files := map[string]string{"a.txt": "alpha\n", "b/c.go": "package b\n", "b/d/e.sh*": "#!/bin/sh\necho e\n", "b-x": "sorts after b/ in git\n",
		"link": "->b/c.go", "out": "->../../etc/passwd", "z/empty.txt": ""}
	write(t, dir, files)
	s := newStore(t, ws, "run_a")
	var tr Tracker
	res, err := tr.Take(s, dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != len(files) || res.Hashed != 5 || len(res.Omitted) != 0 {
		t.Errorf("result: %+v", res)
	}
	for _, c := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, c...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", c, err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "write-tree").Output()
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, ".git"))
	if got := strings.TrimSpace(string(out)); got != res.Tree.String() {
		t.Errorf("tree %s, git write-tree %s", res.Tree, got)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if err := Checkout(s, res.Tree, dst, false, nil); err != nil {
		t.Fatal(err)
	}
	equal(t, "checkout", read(t, dst), files)
}

// Only files whose stamp changed are read again, and a file changed in place to the same size
// is still seen (its mtime and ctime moved); Switch moves a folder between two snapshots.
func TestTakeHashesOnlyWhatChanged(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	v1 := map[string]string{"a.txt": "one\n", "b/b.txt": "bee\n", "b/c.txt": "sea\n", "d/e.txt": "eee\n"}
	write(t, dir, v1)
	settle(t, dir)
	s := newStore(t, ws, "run_a")
	var tr Tracker
	r1, err := tr.Take(s, dir, Limits{})
	if err != nil || r1.Hashed != 4 {
		t.Fatalf("first take: %+v %v", r1, err)
	}
	again, err := tr.Take(s, dir, Limits{})
	if err != nil || again.Hashed != 0 || again.Tree != r1.Tree || again.Stored != 0 {
		t.Fatalf("unchanged take: %+v %v", again, err)
	}
	write(t, dir, map[string]string{"a.txt": "ONE\n", "new/f.txt": "fresh\n"})
	os.RemoveAll(filepath.Join(dir, "d"))
	v2 := map[string]string{"a.txt": "ONE\n", "b/b.txt": "bee\n", "b/c.txt": "sea\n", "new/f.txt": "fresh\n"}
	r2, err := tr.Take(s, dir, Limits{})
	if err != nil || r2.Hashed != 2 || r2.Tree == r1.Tree {
		t.Fatalf("second take: %+v %v", r2, err)
	}
	// Switch back and forth on a checkout, which holds no hard link to anything.
	co := filepath.Join(t.TempDir(), "co")
	var ct Tracker
	if err := Checkout(s, r2.Tree, co, false, &ct); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "keep")
	if err := os.Link(filepath.Join(co, "a.txt"), outside); err != nil {
		t.Fatal(err)
	}
	if err := Switch(s, co, r2.Tree, r1.Tree, &ct); err != nil {
		t.Fatal(err)
	}
	equal(t, "switched to 1", read(t, co), v1)
	if b, _ := os.ReadFile(outside); string(b) != "ONE\n" {
		t.Errorf("a hard link to the old file changed: %q (a switch must write a new file)", b)
	}
	if err := Switch(s, co, r1.Tree, r2.Tree, &ct); err != nil {
		t.Fatal(err)
	}
	equal(t, "switched to 2", read(t, co), v2)
	settle(t, co)
	if r, err := ct.Take(s, co, Limits{}); err != nil || r.Tree != r2.Tree {
		t.Errorf("take after switch: %+v %v", r, err)
	}
}

// A same-size rewrite whose mtime is put back is still seen: its ctime moved.
func TestSameSizeRewriteIsSeen(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	write(t, dir, map[string]string{"f": "aaaa"})
	settle(t, dir)
	s := newStore(t, ws, "run_a")
	var tr Tracker
	r1, err := tr.Take(s, dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	syscall.Stat(filepath.Join(dir, "f"), &st)
	os.WriteFile(filepath.Join(dir, "f"), []byte("bbbb"), 0o644)
	os.Chtimes(filepath.Join(dir, "f"), time.Unix(0, st.Atim.Nano()), time.Unix(0, st.Mtim.Nano()))
	r2, err := tr.Take(s, dir, Limits{})
	if err != nil || r2.Tree == r1.Tree || r2.Hashed != 1 {
		t.Errorf("the same-size rewrite was missed: %+v %v", r2, err)
	}
}

// A stamp taken within the racy margin of the file's last change is not trusted (a write in
// the same tick of the file system's clock would leave it as it was); a time with no
// nanoseconds gets the coarse margin.
func TestRacyStampsAreNotTrusted(t *testing.T) {
	now := time.Now()
	fine := now.Add(-racyMargin / 2).UnixNano()
	if (stamp{mtime: fine, ctime: fine}).settledBy(now) {
		t.Error("a change within the margin counts as settled")
	}
	old := now.Add(-2 * racyMargin).UnixNano()
	if !(stamp{mtime: old | 1, ctime: old | 1}).settledBy(now) {
		t.Error("an old change is not settled")
	}
	coarse := now.Add(-time.Second).Truncate(time.Second).UnixNano()
	if (stamp{mtime: coarse, ctime: coarse}).settledBy(now) {
		t.Error("a coarse time within two seconds counts as settled")
	}
}

// What a snapshot cannot or must not hold is left out and listed; links are kept as links,
// never followed.
func TestTakeLeavesOutWhatItCannotHold(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	write(t, dir, map[string]string{"small": "ok", "big": strings.Repeat("x", 5000), "secret": "->/etc/shadow"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, ws, "run_a")
	var tr Tracker
	res, err := tr.Take(s, dir, Limits{MaxBlob: 4096})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, o := range res.Omitted {
		reasons[o.Path] = o.Reason
	}
	if !strings.Contains(reasons["big"], "over the limit") || !strings.Contains(reasons["fifo"], "not a file") || len(reasons) != 2 {
		t.Errorf("omitted: %+v", res.Omitted)
	}
	co := filepath.Join(t.TempDir(), "co")
	if err := Checkout(s, res.Tree, co, false, nil); err != nil {
		t.Fatal(err)
	}
	equal(t, "checkout", read(t, co), map[string]string{"small": "ok", "secret": "->/etc/shadow"})

	// The budget of new bytes: the second new file does not fit.
	write(t, dir, map[string]string{"n1": strings.Repeat("1", 3000), "n2": strings.Repeat("2", 3000)})
	res, err = tr.Take(s, dir, Limits{MaxBlob: 4096, MaxNewBytes: 4000})
	if err != nil || len(res.Omitted) != 3 || !strings.Contains(res.Omitted[2].Reason, "new files") {
		t.Errorf("budget: %+v %v", res.Omitted, err)
	}
	// Only: a CLI home keeps its session store and nothing else.
	write(t, dir, map[string]string{"projects/p/s.jsonl": "{}\n", ".credentials.json": "token"})
	res, err = tr.Take(s, dir, Limits{Only: []string{"projects"}})
	if err != nil || res.Files != 1 {
		t.Fatalf("only: %+v %v", res, err)
	}
	co2 := filepath.Join(t.TempDir(), "co")
	if err := Checkout(s, res.Tree, co2, false, nil); err != nil {
		t.Fatal(err)
	}
	equal(t, "only", read(t, co2), map[string]string{"projects/p/s.jsonl": "{}\n"})
}

// Big files (over MaxInMemory) are streamed in and out, and another store sees the objects
// once they are committed, from the writer's pack.
func TestBigFilesAndTwoStores(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), (3*MaxInMemory)/16+7)
	write(t, dir, map[string]string{"big.bin": string(big)})
	a := newStore(t, ws, "run_a")
	var tr Tracker
	res, err := tr.Take(a, dir, Limits{})
	if err != nil || res.StoredBytes < int64(len(big)) {
		t.Fatalf("take: %+v %v", res, err)
	}
	b := newStore(t, ws, "run_b")
	co := filepath.Join(t.TempDir(), "co")
	if err := Checkout(b, res.Tree, co, true, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(co, "big.bin")); !bytes.Equal(got, big) {
		t.Error("the big file came back different")
	}
	if fi, _ := os.Stat(co); fi.Mode().Perm() != 0o555 {
		t.Errorf("read-only checkout: %v", fi.Mode())
	}
	// The second store already has every object: a snapshot of the same folder adds none.
	var tb Tracker
	if r, err := tb.Take(b, dir, Limits{}); err != nil || r.Stored != 0 {
		t.Errorf("take into the second store: %+v %v", r, err)
	}
}

// A damaged object is reported, never returned; a pack and an index a kill cut short are cut
// back before the next append, and what they held before stays readable.
func TestDamageAndTornAppends(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	write(t, dir, map[string]string{"a": "first version\n"})
	s := newStore(t, ws, "run_a")
	var tr Tracker
	r1, err := tr.Take(s, dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	packs := filepath.Join(ws, Dir, "packs")
	// a torn append: bytes past the last object, and half an index line
	appendTo(t, filepath.Join(packs, "run_a.pack"), "garbage")
	appendTo(t, filepath.Join(packs, "run_a.idx"), "0123")
	s2 := newStore(t, ws, "run_a")
	write(t, dir, map[string]string{"a": "second version\n"})
	var tr2 Tracker
	r2, err := tr2.Take(s2, dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tree := range []ID{r1.Tree, r2.Tree} {
		if err := Checkout(s2, tree, filepath.Join(t.TempDir(), "co"), false, nil); err != nil {
			t.Errorf("checkout %s after a torn append: %v", tree, err)
		}
	}
	s2.Close()
	idx, _ := os.ReadFile(filepath.Join(packs, "run_a.idx"))
	if bytes.Contains(idx, []byte("0123\n")) || bytes.Count(idx, []byte("\n")) != 4 {
		t.Errorf("index after the torn line was cut:\n%s", idx)
	}
	// Flip a byte of the first version's bytes.
	pack := filepath.Join(packs, "run_a.pack")
	b, _ := os.ReadFile(pack)
	i := bytes.Index(b, []byte("first version"))
	b[i] ^= 0x20
	os.WriteFile(pack, b, 0o644)
	s3 := newStore(t, ws, "")
	err = Checkout(s3, r1.Tree, filepath.Join(t.TempDir(), "co"), false, nil)
	var de *DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("checkout of a damaged object: %v", err)
	}
}

func appendTo(t *testing.T, name, s string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(s)
	f.Close()
}

// A tree someone wrote into the store by hand that names ".." or a path with a slash is refused
// when read, and a checkout of it writes nothing outside its folder.
func TestForgedTreeIsRefused(t *testing.T) {
	ws := t.TempDir()
	s := newStore(t, ws, "run_a")
	blob, _, err := s.put(Blob, []byte("escaped\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"..", "a/../../x", "."} {
		raw := append([]byte(ModeFile+" "+name+"\x00"), blob[:]...)
		tree, _, err := s.put(Tree, raw)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "in", "co")
		os.MkdirAll(filepath.Dir(dst), 0o755)
		err = Checkout(s, tree, dst, false, nil)
		if err == nil || !strings.Contains(err.Error(), "not a tree in git's format") {
			t.Errorf("a tree naming %q: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "x")); err == nil {
			t.Errorf("a tree naming %q wrote outside its folder", name)
		}
	}
}
