// Package statedir makes the workspace's .agentcanvas/ folder. The first time it is created
// it gets a .gitignore of its own that keeps AgentCanvas's state (sandboxes, logs, runs,
// transcripts, memory) out of the person's repository, while the flows and skills they write
// there stay visible to git — without touching the repository's own .gitignore.
package statedir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Dir is the state folder, relative to the workspace root.
const Dir = ".agentcanvas"

// Ignore is the .gitignore written into a new state folder.
const Ignore = `# Written by AgentCanvas when it created this folder: its run state (sandboxes, logs, runs,
# transcripts, memory) stays out of git; your flows and skills do not. Edit freely: AgentCanvas
# writes this file only when it creates the folder.
*
!flows/
!flows/**
!skills/
!skills/**
!mcp-allowlist.json
`

// Ensure creates root's .agentcanvas/ with its .gitignore when it does not exist yet. A
// folder that exists is left as it is (its .gitignore may have been edited or removed on
// purpose). Two writers creating it at once leave one folder and one .gitignore.
func Ensure(root *os.Root) error {
	if _, err := root.Lstat(Dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil // there (or unreadable: the caller's own access reports it)
	}
	if err := root.Mkdir(Dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // another writer made it, and writes its .gitignore
		}
		return err
	}
	f, err := root.OpenFile(filepath.Join(Dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(Ignore); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// EnsureAt is Ensure for a workspace path.
func EnsureAt(workspace string) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	return Ensure(root)
}

// TempName is a fresh temporary name in folder dir (slash-separated, "." for the root) for a
// file AgentCanvas writes there and then renames into place: .agentcanvas-<16 hex>.tmp, as git
// makes its own beside the file. Nothing but AgentCanvas makes names of this form, so a copy of
// the person's folders leaves them out (IsTempName) and recovery removes the ones its journal
// names.
func TempName(dir string) string {
	var r [8]byte
	rand.Read(r[:])
	return path.Join(dir, tempPrefix+hex.EncodeToString(r[:])+tempSuffix)
}

const tempPrefix, tempSuffix = ".agentcanvas-", ".tmp"

// IsTempName says whether the last element of p is a name TempName makes.
func IsTempName(p string) bool {
	h, ok := strings.CutPrefix(path.Base(p), tempPrefix)
	h, ok2 := strings.CutSuffix(h, tempSuffix)
	if !ok || !ok2 || len(h) != 16 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
