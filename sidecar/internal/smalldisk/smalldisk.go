// Package smalldisk gives tests a real small file system to fill: a tmpfs of a given size,
// mounted for the test (which needs the right to mount, as root has) and unmounted after it.
// A full disk met this way is the kernel's ENOSPC at whatever write it falls on, not one a
// test chose.
package smalldisk

import (
	"fmt"
	"os/exec"
	"testing"
)

// Mount mounts a tmpfs of size bytes on a new temporary folder and returns the folder; the
// test is skipped where no tmpfs can be mounted.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}
