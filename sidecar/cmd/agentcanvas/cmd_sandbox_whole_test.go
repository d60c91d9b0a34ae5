package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// sandbox prepare . gives work/ the whole workspace, less what .gitignore ignores and the
// blocked folders, with a link leading out kept as a link.
func TestSandboxPrepareWholeWorkspace(t *testing.T) {
	ws := t.TempDir()
	for name, body := range map[string]string{".gitignore": "*.o\n", "src/a.go": "package a\n", "src/a.o": "obj\n", "node_modules/m/i.js": "m\n", "README.md": "r\n"} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	os.Symlink("/etc/hostname", filepath.Join(ws, "src", "host"))
	code, out, errs := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "w1", ".")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var paths struct{ WorkDir string }
	if err := json.Unmarshal([]byte(out), &paths); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for name, want := range map[string]bool{".gitignore": true, "src/a.go": true, "README.md": true, "src/a.o": false, "node_modules": false} {
		if _, err := os.Lstat(filepath.Join(paths.WorkDir, filepath.FromSlash(name))); (err == nil) != want {
			t.Errorf("work/%s: present %v, want %v", name, err == nil, want)
		}
	}
	if got, err := os.Readlink(filepath.Join(paths.WorkDir, "src", "host")); err != nil || got != "/etc/hostname" {
		t.Errorf("work/src/host -> %q (%v), want the link as it is", got, err)
	}
}
