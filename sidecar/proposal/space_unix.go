//go:build unix

package proposal

import (
	"os"

	"golang.org/x/sys/unix"
)

// freeSpace is the space an unprivileged writer may still use on root's file system, and its
// block size; -1 when unknown.
func freeSpace(root *os.Root) (free, block int64) {
	f, err := root.Open(".")
	if err != nil {
		return -1, 4096
	}
	defer f.Close()
	var st unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &st) != nil || st.Bsize <= 0 {
		return -1, 4096
	}
	return int64(st.Bavail) * int64(st.Bsize), int64(st.Bsize)
}

// syncDir makes the names in folder dir (its new and removed entries) durable.
func syncDir(root *os.Root, dir string) error {
	f, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
