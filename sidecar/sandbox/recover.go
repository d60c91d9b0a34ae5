package sandbox

// Before a sandbox is copied from the workspace, with the workspace lock held, whatever an
// interrupted writer left is settled: an apply cut short is finished or rolled back (by the
// proposal package, through RecoverLocked), and the staging folders of prepares that were
// killed are removed (a prepare holds the lock while it stages, so with the lock held no
// staging folder is in use).

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/statedir"
)

// RecoverLocked finishes or rolls back an interrupted apply of the workspace with its lock
// held, saying what it did ("" when there was nothing). The proposal package sets it (this
// package cannot import that one, which imports this one).
var RecoverLocked func(workspace string, root *os.Root) (string, error)

// stagingInfix is in the name of a staging folder: .<agent>.staging-<12 hex>.
const stagingInfix = ".staging-"

// recoverFirst settles what interrupted writers left, before a copy is made.
func recoverFirst(o Options, root *os.Root) error {
	if RecoverLocked != nil {
		notice, err := RecoverLocked(o.Workspace, root)
		if err != nil {
			return fmt.Errorf("the workspace cannot be copied until an interrupted apply is recovered: %w", err)
		}
		if notice != "" && o.Notice != nil {
			o.Notice(notice)
		}
	}
	if n := removeStaging(root); n > 0 && o.Notice != nil {
		o.Notice(fmt.Sprintf("removed %d staging %s left by an interrupted sandbox prepare", n, map[bool]string{true: "folder", false: "folders"}[n == 1]))
	}
	return nil
}

// removeStaging removes every staging folder under the runs' sandbox folders; it returns how
// many it removed.
func removeStaging(root *os.Root) int {
	runs, err := fs.ReadDir(root.FS(), Dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range runs {
		if !r.IsDir() {
			continue
		}
		ents, err := fs.ReadDir(root.FS(), path.Join(Dir, r.Name()))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.IsDir() && strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), stagingInfix) {
				if removeTree(root, path.Join(Dir, r.Name(), e.Name())) == nil {
					n++
				}
			}
		}
	}
	return n
}

// isOwnTemp: a file of an apply in progress, never the person's (statedir.TempName).
func isOwnTemp(p string) bool { return statedir.IsTempName(p) }
