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

// linkAside gives p a second name, tmp under .agentcanvas/tmp (a hard link: no data is
// copied), so a rollback can rename the very same file back without needing free space.
func (d *dirs) linkAside(p, tmp string) error {
	sfd, sn, err := d.split(p)
	if err != nil {
		return err
	}
	tfd, tn, err := d.split(tmp)
	if err != nil {
		return err
	}
	return pathErr("link", p, unix.Linkat(sfd, sn, tfd, tn, 0))
}
