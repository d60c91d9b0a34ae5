//go:build linux

package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A fork's copy of a CLI home holds what the agent left there, links too (the snapshot keeps
// them as links). Moving its sessions to the fork's working folder renames inside the home
// only: a session store that is a link out of it (to the workspace, to another agent's home)
// is left alone, and so is what it leads to; a .project_root that is a FIFO is not waited on.
// Without safefile the rename went through the link and moved the outside folder.
func TestRekeySessionsStaysInTheHome(t *testing.T) {
	from, to := "/ws/.agentcanvas/sandboxes/run_a/w/work", "/ws/.agentcanvas/sandboxes/run_b/w/work"
	t.Run("claude", func(t *testing.T) {
		home, outside := t.TempDir(), t.TempDir()
		must(t, os.Mkdir(filepath.Join(outside, claudeProjectDir(from)), 0o700))
		must(t, os.Symlink(outside, filepath.Join(home, "projects")))
		if err := RekeySessions(BackendClaude, home, from, to); err == nil {
			t.Errorf("a session store linked out of the home was rekeyed without an error")
		}
		assertExists(t, filepath.Join(outside, claudeProjectDir(from)))
		assertMissing(t, filepath.Join(outside, claudeProjectDir(to)))
	})
	t.Run("gemini", func(t *testing.T) {
		home, outside := t.TempDir(), t.TempDir()
		must(t, os.MkdirAll(filepath.Join(outside, "p"), 0o700))
		must(t, os.WriteFile(filepath.Join(outside, "p", ".project_root"), []byte(from+"\n"), 0o600))
		must(t, os.Mkdir(filepath.Join(home, ".gemini"), 0o700))
		must(t, os.Symlink(outside, filepath.Join(home, ".gemini", "tmp")))
		if err := RekeySessions(BackendGemini, home, from, to); err == nil {
			t.Errorf("a session store linked out of the home was rekeyed without an error")
		}
		assertExists(t, filepath.Join(outside, "p", ".project_root"))
		sum := sha256.Sum256([]byte(to))
		assertMissing(t, filepath.Join(outside, hex.EncodeToString(sum[:])))
	})
	t.Run("gemini FIFO and a link to a project root", func(t *testing.T) {
		home, outside := t.TempDir(), t.TempDir()
		tmp := filepath.Join(home, ".gemini", "tmp")
		must(t, os.MkdirAll(filepath.Join(tmp, "fifo"), 0o700))
		must(t, syscall.Mkfifo(filepath.Join(tmp, "fifo", ".project_root"), 0o600))
		must(t, os.MkdirAll(filepath.Join(tmp, "linked"), 0o700))
		must(t, os.WriteFile(filepath.Join(outside, "root"), []byte(from), 0o600))
		must(t, os.Symlink(filepath.Join(outside, "root"), filepath.Join(tmp, "linked", ".project_root")))
		must(t, os.MkdirAll(filepath.Join(tmp, "real"), 0o700))
		must(t, os.WriteFile(filepath.Join(tmp, "real", ".project_root"), []byte(from+"\n"), 0o600))
		if err := RekeySessions(BackendGemini, home, from, to); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(to))
		assertExists(t, filepath.Join(tmp, hex.EncodeToString(sum[:]))) // the real one moved
		assertExists(t, filepath.Join(tmp, "fifo", ".project_root"))
		assertExists(t, filepath.Join(tmp, "linked", ".project_root"))
		assertExists(t, filepath.Join(outside, "root"))
	})
}

func assertExists(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); err != nil {
		t.Errorf("%s is gone: %v", p, err)
	}
}

func assertMissing(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s was made", p)
	}
}
