//go:build linux

package main

// A 200 MB file with one line changed in its middle, applied and reverted through real
// processes: both take no more memory than git apply takes for the same patch (with a margin
// for the runtime), and the revert gives the file back byte for byte. The apply took five
// times the file's size before, and its revert was refused (a version over 64 MiB).

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// maxRSS runs c and returns its peak resident memory in bytes.
func maxRSS(t *testing.T, c *exec.Cmd) int64 {
	t.Helper()
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", c.Args, err, out)
	}
	return c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

func TestTwoHundredMegabyteApplyAndRevertInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 1 GB")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	const lines, changed = 3_100_000, 1_550_000
	line := func(i int) string {
		return fmt.Sprintf("line %08d of a big file, with some padding text to make it long\n", i)
	}
	ws := t.TempDir()
	big := filepath.Join(ws, "big.txt")
	f, _ := os.Create(big)
	w := bufio.NewWriterSize(f, 1<<20)
	oldSum, newSum := sha1.New(), sha1.New()
	size := int64(0)
	for i := 1; i <= lines; i++ {
		size += int64(len(line(i)))
	}
	fmt.Fprintf(oldSum, "blob %d\x00", size)
	fmt.Fprintf(newSum, "blob %d\x00", size-int64(len(line(changed)))+int64(len("CHANGED\n")))
	for i := 1; i <= lines; i++ {
		l := line(i)
		w.WriteString(l)
		oldSum.Write([]byte(l))
		if i == changed {
			l = "CHANGED\n"
		}
		newSum.Write([]byte(l))
	}
	w.Flush()
	f.Close()
	var patch bytes.Buffer
	fmt.Fprintf(&patch, "diff --git a/big.txt b/big.txt\nindex %s..%s 100644\n--- a/big.txt\n+++ b/big.txt\n@@ -%d,7 +%d,7 @@\n",
		hex.EncodeToString(oldSum.Sum(nil)), hex.EncodeToString(newSum.Sum(nil)), changed-3, changed-3)
	for i := changed - 3; i <= changed+3; i++ {
		if i == changed {
			fmt.Fprintf(&patch, "-%s+CHANGED\n", line(i))
			continue
		}
		fmt.Fprintf(&patch, " %s", line(i))
	}
	agent := filepath.Join(ws, ".agentcanvas/sandboxes/r1/coder/proposal")
	os.MkdirAll(agent, 0o755)
	os.WriteFile(filepath.Join(agent, "changes.patch"), patch.Bytes(), 0o644)
	pj, _ := json.Marshal(map[string]any{"version": "1", "runId": "r1", "agentId": "coder", "paths": map[string]string{"patchFile": "proposal/changes.patch"},
		"changedFiles": []map[string]string{{"path": "big.txt", "status": "modified"}}})
	os.WriteFile(filepath.Join(agent, "proposal.json"), pj, 0o644)

	gitWS := t.TempDir()
	copyFile(t, big, filepath.Join(gitWS, "big.txt"))
	gitApply := exec.Command("git", "apply", filepath.Join(agent, "changes.patch"))
	gitApply.Dir = gitWS
	gitRSS := maxRSS(t, gitApply)

	applyRSS := maxRSS(t, cli(nil, "proposal", "apply", "--workspace", ws, filepath.Join(agent, "proposal.json")))
	if fileSHA1(t, big) != fileSHA1(t, filepath.Join(gitWS, "big.txt")) {
		t.Fatal("the apply's file differs from git apply's")
	}
	revertRSS := maxRSS(t, cli(nil, "proposal", "revert", "--workspace", ws, filepath.Join(agent, "proposal.json")))
	if !sameAsLines(t, big, lines, line) {
		t.Fatal("the revert did not give the file back byte for byte")
	}
	t.Logf("a %d MB file: apply %d MB, revert %d MB, git apply %d MB", size>>20, applyRSS>>20, revertRSS>>20, gitRSS>>20)
	for what, rss := range map[string]int64{"apply": applyRSS, "revert": revertRSS} {
		if rss > gitRSS*135/100 {
			t.Errorf("the %s took %d MB, more than git apply's %d MB for the same file", what, rss>>20, gitRSS>>20)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
}

func fileSHA1(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha1.New()
	io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil))
}

// sameAsLines says whether p holds exactly line(1) … line(n).
func sameAsLines(t *testing.T, p string, n int, line func(int) string) bool {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for i := 1; i <= n; i++ {
		l, err := r.ReadString('\n')
		if err != nil || l != line(i) {
			return false
		}
	}
	_, err = r.ReadByte()
	return err == io.EOF
}
