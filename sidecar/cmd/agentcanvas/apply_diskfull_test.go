//go:build linux

package main

// A full disk during an apply, on a real small file system (tmpfs, mounted by the test when
// it runs as root): at every amount of free space the apply either happens whole with its
// ledger entry, or is refused or rolled back with the workspace byte-identical and a message
// naming the free space.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/smalldisk"
	"golang.org/x/sys/unix"
)

// mountSmallDisk is an 8 MiB file system of the test's own (the injected ENOSPC of
// TestFaultInjectionLeavesWorkspaceIdentical, package proposal, covers a full disk where none
// can be mounted).
func mountSmallDisk(t *testing.T) string { return smalldisk.Mount(t, 8<<20) }

func freeBytes(t *testing.T, dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

func TestApplyOnAFullDisk(t *testing.T) {
	disk := mountSmallDisk(t)
	t.Run("checked first", func(t *testing.T) { applyOnFullDisk(t, disk, nil, 96<<10) })
	// Without the check, the apply runs into the full disk at one step after another.
	t.Run("rolled back", func(t *testing.T) {
		applyOnFullDisk(t, disk, []string{"AGENTCANVAS_TEST_NO_SPACE_CHECK=1"}, 24<<10)
	})
}

func applyOnFullDisk(t *testing.T, disk string, env []string, step int64) {
	counts := map[string]int{}
	for free := int64(0); ; free += step {
		ws := filepath.Join(disk, "ws")
		os.RemoveAll(ws)
		os.Mkdir(ws, 0o755)
		ws, prop, before, after := faultWorkspaceIn(t, ws, 40)
		filler := filepath.Join(disk, "filler")
		if size := freeBytes(t, disk) - free; size > 0 {
			if out, err := exec.Command("fallocate", "-l", fmt.Sprint(size), filler).CombinedOutput(); err != nil {
				t.Fatalf("fallocate: %v %s", err, out)
			}
		}
		code, _, _, errs := runProc(t, env, "proposal", "apply", "--workspace", ws, prop)
		os.Remove(filler)
		if l := leftovers(t, ws); len(l) > 0 {
			t.Fatalf("%d bytes free: left behind %v", free, l)
		}
		if code == 0 {
			if !sameTree(tree(t, ws), after) || ledgerApplies(t, ws) != 1 {
				t.Fatalf("%d bytes free: the apply said it happened, but the workspace or the ledger does not match", free)
			}
			counts["applied"]++
			t.Logf("%d bytes free: %v", free, counts)
			return
		}
		if now := tree(t, ws); !sameTree(now, before) {
			t.Fatalf("%d bytes free: a failed apply changed the workspace:\n%s\n%s", free, treeDiff(before, now), errs)
		}
		if ledgerApplies(t, ws) != 0 {
			t.Fatalf("%d bytes free: a failed apply has a ledger entry", free)
		}
		switch {
		case strings.Contains(errs, "not enough free space: the apply needs about") && strings.Contains(errs, "free; nothing was changed"):
			counts["refused before writing"]++
		case strings.Contains(errs, "no space left on device") && strings.Contains(errs, "free)"):
			counts["rolled back"]++
		default:
			t.Fatalf("%d bytes free: the message does not say the disk is full and how much is free:\n%s", free, errs)
		}
		if free > 8<<20 {
			t.Fatalf("never applied: %v", counts)
		}
	}
}
