//go:build linux

package proposal

import (
	"errors"
	"path"

	"golang.org/x/sys/unix"
)

// exchange swaps the names from and p (same folder) in one step: p then holds the new file,
// from the old one. Replacing with a plain rename over p costs more on ext4, whose
// auto_da_alloc starts writing the new file's data to disk on every rename over an existing
// file (a wait on a busy disk); an exchange does not, keeps the old file whole for the rollback,
// and leaves the old inode to be unlinked, as git apply does. errNoExchange: not supported here.
func (d *dirs) exchange(from, p string) error {
	fd, n, err := d.split(p)
	if err != nil {
		return err
	}
	err = unix.Renameat2(fd, path.Base(from), fd, n, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoExchange
	}
	return pathErr("rename", p, err)
}
