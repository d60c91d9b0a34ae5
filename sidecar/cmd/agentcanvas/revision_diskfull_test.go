//go:build linux

package main

// A revision asked for on a nearly full disk (a real small tmpfs, at each of several amounts
// of free space): whatever fails, revision 1 stays kept as it was, nothing says a revision
// exists whose files are not whole, and once there is room again the next request makes the
// next revision, which applies.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRequestChangesOnANearlyFullDisk(t *testing.T) {
	disk := mountSmallDisk(t)
	outcomes := map[string]int{}
	for free := int64(0); free <= 64<<10; free += 4 << 10 {
		ws := filepath.Join(disk, fmt.Sprintf("ws%d", free))
		os.MkdirAll(filepath.Join(ws, "agents"), 0o755)
		os.MkdirAll(filepath.Join(ws, "flows"), 0o755)
		os.WriteFile(filepath.Join(ws, "greet.txt"), []byte("hi\n"), 0o644)
		os.WriteFile(filepath.Join(ws, "agents/coder.sh"), []byte(countingCoder), 0o644)
		os.WriteFile(filepath.Join(ws, "flows/fix.yaml"), []byte(reviewFlow("greet.txt")), 0o644)
		if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		ref, agentDir := runAndComment(t, ws)
		rev1, _ := os.ReadFile(filepath.Join(agentDir, "proposal/changes.patch"))
		filler := filepath.Join(disk, "filler")
		if size := freeBytes(t, disk) - free; size > 0 {
			if out, err := exec.Command("fallocate", "-l", fmt.Sprint(size), filler).CombinedOutput(); err != nil {
				t.Fatalf("fallocate: %v %s", err, out)
			}
		}
		ask := []string{"proposal", "request-changes", "--workspace", ws, "--non-interactive", ref}
		code, _, out, errs := runProc(t, nil, ask...)
		os.Remove(filler)
		if code == 0 {
			outcomes["made on the full disk"]++
		} else {
			outcomes["failed on the full disk"]++
			if !strings.Contains(out+errs, "no space left on device") {
				t.Logf("%d bytes free: the request failed without naming the full disk:\n%s%s", free, out, errs)
			}
		}
		if kept, err := os.ReadFile(filepath.Join(agentDir, "proposal/revisions/1/changes.patch")); err == nil && string(kept) != string(rev1) {
			t.Fatalf("%d bytes free: revisions/1 holds another patch", free)
		}
		runProc(t, nil, "proposal", "comment", "--workspace", ws, ref, "greet.txt:1=and more") // open again if it was answered
		if code, _, out, errs := runProc(t, nil, ask...); code != 0 {
			t.Fatalf("%d bytes free: asked again with room: %s%s", free, out, errs)
		}
		if kept, _ := os.ReadFile(filepath.Join(agentDir, "proposal/revisions/1/changes.patch")); string(kept) != string(rev1) {
			t.Fatalf("%d bytes free: revision 1 was not kept as it was", free)
		}
		n, revising := reviewOf(t, agentDir)
		if revising || n < 2 {
			t.Fatalf("%d bytes free: revision %d, revising %v", free, n, revising)
		}
		for k := 1; k < n; k++ {
			if _, err := os.Stat(filepath.Join(agentDir, "proposal/revisions", fmt.Sprint(k), "changes.patch")); err != nil {
				t.Fatalf("%d bytes free: revision %d of %d is not kept", free, k, n)
			}
		}
		if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, ref); code != 0 {
			t.Fatalf("%d bytes free: the last revision does not apply: %s", free, errs)
		}
		os.RemoveAll(ws)
	}
	t.Logf("%v", outcomes)
}
