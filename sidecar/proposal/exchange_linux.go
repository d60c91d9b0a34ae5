package proposal

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps from and p, both in the same folder, in one atomic step (renameat2's
// RENAME_EXCHANGE): p gets the new version and from keeps the old one for a rollback. It is one
// call where a hard link and a rename were two, and on ext4 it does not start the new file's
// writeback as a rename over an existing file does (auto_da_alloc). errors.ErrUnsupported when
// the file system cannot swap (the caller links and renames instead).
func (d *dirs) exchange(from, p string) error {
	ffd, fn, tfd, tn, err := d.splitTwo(from, p)
	if err != nil {
		return err
	}
	err = unix.Renameat2(ffd, fn, tfd, tn, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errors.ErrUnsupported
	}
	return pathErr("rename", p, err)
}

// startWriteback starts writing f's data to disk, without waiting: what ext4 does by itself
// (auto_da_alloc) for a file renamed over another, and not for one swapped in, so that a
// replaced file is whole after a power loss rather than empty. Any file system gets it.
func startWriteback(f writeFile) error {
	rf, ok := f.(*rawFile)
	if !ok {
		return nil
	}
	err := unix.SyncFileRange(rf.fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ESPIPE) {
		return nil
	}
	return pathErr("sync_file_range", rf.name, err)
}

// startFileWriteback starts writing f's dirty data to disk, without waiting (the pack's, so
// that its sync at the commit point finds most of it done).
func startFileWriteback(f *os.File) {
	unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// datasync makes f's data durable (and the metadata needed to read it back).
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
