//go:build unix

package proposal

import (
	"path"

	"golang.org/x/sys/unix"
)

// moveInto renames from (a temporary file under .agentcanvas/tmp) to p, through the cached
// folder handles: the user's folders never hold a temporary file of ours.
func (d *dirs) moveInto(from, p string) error {
	ffd, fn, err := d.split(from)
	if err != nil {
		return err
	}
	tfd, tn, err := d.split(p)
	if err != nil {
		return err
	}
	return pathErr("rename", p, unix.Renameat(ffd, fn, tfd, path.Base(tn)))
}
