//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// agentFolder is a folder an agent wrote, and a file outside it (the workspace's).
func agentFolder(t *testing.T) (dir, outside string) {
	t.Helper()
	dir = t.TempDir()
	outside = filepath.Join(t.TempDir(), "package.json")
	if err := os.WriteFile(outside, []byte(`{"name":"theirs"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, outside
}

// A FIFO where a file is expected is refused at once: the read does not wait for a writer
// (the test would hang without O_NONBLOCK), nor does a seeding write.
func TestFIFOIsRefusedNotWaitedFor(t *testing.T) {
	dir, _ := agentFolder(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "settings.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(filepath.Join(dir, "settings.json"), 1<<20)
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile of a FIFO: %v, want ErrNotRegular", err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.WriteNew("settings.json", []byte("{}"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteNew over a FIFO: %v, want ErrExist", err)
	}
}

// A sparse file of a terabyte is refused by its size, before a byte is read.
func TestHugeSparseFileIsRefusedBySize(t *testing.T) {
	dir, _ := agentFolder(t)
	p := filepath.Join(dir, "settings.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		f.Close()
		t.Skipf("no sparse file of 1 TB here: %v", err)
	}
	f.Close()
	if _, err := ReadFile(p, 4<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile of 1 TB: %v, want ErrTooLarge", err)
	}
}

// A link to a file outside the folder is neither read through nor written through: a write
// replaces the link, and the file it led to keeps its bytes.
func TestLinkOutIsNotFollowed(t *testing.T) {
	dir, outside := agentFolder(t)
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(link, 1<<20); err == nil {
		t.Errorf("read through a link out of the folder: %q", b)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.WriteNew("settings.json", []byte("{}"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteNew over a link: %v, want ErrExist", err)
	}
	if err := d.WriteFile("settings.json", []byte(`{"hooks":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != `{"name":"theirs"}` {
		t.Errorf("the file outside was written through the link: %q", b)
	}
	if st, err := os.Lstat(link); err != nil || !st.Mode().IsRegular() {
		t.Errorf("the link was not replaced by a file: %v %v", st, err)
	}
	// A link to a folder outside: nothing is made or read beyond it.
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(dir, ".gemini")); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile(".gemini/package.json", []byte("x"), 0o600); err == nil {
		t.Error("wrote through a link to a folder outside")
	}
	if _, err := d.ReadFile(".gemini/package.json", 1<<20); err == nil {
		t.Error("read through a link to a folder outside")
	}
	if b, _ := os.ReadFile(outside); string(b) != `{"name":"theirs"}` {
		t.Errorf("the file outside changed: %q", b)
	}
}

// Walk lists regular files only, without going down a link to a folder.
func TestWalkSkipsLinksAndSpecialFiles(t *testing.T) {
	dir, outside := agentFolder(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "hooks", "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "hooks", "a.sh"), []byte("a"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "hooks", "sub", "b.sh"), []byte("b"), 0o644))
	must(syscall.Mkfifo(filepath.Join(dir, "hooks", "fifo"), 0o644))
	must(os.Symlink(filepath.Dir(outside), filepath.Join(dir, "hooks", "out")))
	must(os.Symlink(outside, filepath.Join(dir, "hooks", "file-out")))
	d, err := Open(dir)
	must(err)
	defer d.Close()
	var got []string
	must(d.Walk("hooks", func(name string) error { got = append(got, name); return nil }))
	if len(got) != 2 || got[0] != "hooks/a.sh" || got[1] != "hooks/sub/b.sh" {
		t.Errorf("Walk: %q, want hooks/a.sh and hooks/sub/b.sh", got)
	}
	must(d.Walk("missing", func(string) error { t.Error("called for a missing folder"); return nil }))
}
