//go:build unix

package proposal

import (
	"path"

	"golang.org/x/sys/unix"
)

// moveInto renames from to p (a new version's temporary file to its target, or a deleted file
// into .agentcanvas/tmp), through the cached folder handles.
func (d *dirs) moveInto(from, p string) error {
	ffd, fn, tfd, tn, err := d.splitTwo(from, p)
	if err != nil {
		return err
	}
	return pathErr("rename", p, unix.Renameat(ffd, fn, tfd, path.Base(tn)))
}

// splitTwo is split of both paths of a two-name call (rename, link, swap).
func (d *dirs) splitTwo(from, to string) (ffd int, fn string, tfd int, tn string, err error) {
	if ffd, fn, err = d.split(from); err == nil {
		tfd, tn, err = d.split(to)
	}
	return
}

// linkAside gives p a second name, tmp under .agentcanvas/tmp (a hard link: no data is
// copied), so a rollback can rename the very same file back without needing free space.
func (d *dirs) linkAside(p, tmp string) error {
	sfd, sn, tfd, tn, err := d.splitTwo(p, tmp)
	if err != nil {
		return err
	}
	return pathErr("link", p, unix.Linkat(sfd, sn, tfd, tn, 0))
}
