package sandbox

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// copier carries what one Prepare learns about its file system: whether it makes reflinks.
type copier struct {
	noClone atomic.Bool // set at the first refusal: ext4, tmpfs, or two file systems
	cloned  atomic.Int64
}

// clone makes dst share src's blocks (FICLONE: btrfs, XFS with reflink, bcachefs, ZFS 2.2+),
// so a whole-repository sandbox costs metadata only. False when the file system cannot; the
// caller then copies.
func (c *copier) clone(dst, src int) bool {
	if c.noClone.Load() {
		return false
	}
	if err := unix.IoctlFileClone(dst, src); err != nil {
		c.noClone.Store(true)
		return false
	}
	c.cloned.Add(1)
	return true
}

// copyRange copies all of src into dst in the kernel (copy_file_range), from offset 0 of src
// whatever its current offset; read and write where the kernel cannot.
func copyRange(dst, src int) error {
	var off int64
	for {
		n, err := unix.CopyFileRange(src, &off, dst, nil, 1<<30, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			switch err {
			case unix.ENOSYS, unix.EXDEV, unix.EINVAL, unix.EOPNOTSUPP, unix.EPERM:
				return preadCopy(dst, src, off)
			}
			return err
		}
		if n == 0 {
			return nil
		}
	}
}
