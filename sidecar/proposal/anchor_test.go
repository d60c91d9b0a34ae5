package proposal

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A hunk with no context after its changes must end at the end of the file, as git apply
// requires: a proposal that adds lines at the end of its files, applied once, does not apply
// again (from its sandbox, nor as a bare patch), and git apply refuses it too.
func TestSecondApplyOfEndOfFileHunksIsRefused(t *testing.T) {
	needGit(t)
	tree := map[string]string{}
	for i := range 30 {
		tree[fmt.Sprintf("src/f%02d.txt", i)] = "F:one\ntwo\nthree\nfour\n"
	}
	ws, paths := prepared(t, tree)
	for name := range tree {
		f, _ := os.OpenFile(filepath.Join(paths.WorkDir, name), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("added 1\nadded 2\n")
		f.Close()
	}
	if _, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(context.Background(), ws, paths.AgentDir, Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	once := snapshot(t, ws, true)
	patch, _ := os.ReadFile(filepath.Join(paths.AgentDir, PatchFile))
	if out, err := run(t, ws, "git", "apply", "--check", filepath.Join(paths.AgentDir, PatchFile)); err == nil {
		t.Fatalf("git apply takes the patch a second time: %s", out)
	}
	_, err := ApplyPatch(context.Background(), ws, patch, Selection{}, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "hunk 1 ends the file (no context line follows its changes), but the file has 2 lines after line 4") {
		t.Fatalf("the bare patch applied a second time: %v", err)
	}
	if _, err := Apply(context.Background(), ws, paths.AgentDir, Selection{}, ApplyOptions{}); err == nil {
		t.Fatal("the proposal applied a second time")
	}
	if d := diffSnapshots(once, snapshot(t, ws, true)); d != "" {
		t.Fatalf("a refused second apply changed the workspace:\n%s", d)
	}
}

// Real git apply is the oracle for where hunks may match: for random changes (lines drawn
// from a few values, so that context repeats) made into a patch, checked against the file as
// it was, as the patch leaves it, and with lines added around it, whatever git refuses is
// refused, and whatever is applied gives git's bytes.
func TestHunksMatchWhereGitMatchesThem(t *testing.T) {
	needGit(t)
	r := rand.New(rand.NewSource(7))
	cases := 150
	if testing.Short() {
		cases = 40
	}
	words := []string{"a\n", "b\n", "c\n", "}\n", "\n"}
	lines := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.Intn(len(words))])
		}
		return b.String()
	}
	ws := t.TempDir()
	run(t, ws, "git", "init", "-q")
	refused, agreed := 0, 0
	for i := range cases {
		old := lines(r.Intn(8))
		var ed strings.Builder
		for _, l := range strings.SplitAfter(old, "\n") {
			switch r.Intn(6) {
			case 0: // dropped
			case 1:
				ed.WriteString(lines(1 + r.Intn(2)))
				ed.WriteString(l)
			default:
				ed.WriteString(l)
			}
		}
		new := ed.String() + lines(r.Intn(3))
		if new == old {
			continue
		}
		sec, _, _, err := fileDiff("f.txt", side{exists: true, mode: modeFile, data: []byte(old)}, side{exists: true, mode: modeFile, data: []byte(new)})
		if err != nil {
			t.Fatal(err)
		}
		for _, cur := range []string{old, new, old + lines(1+r.Intn(2)), lines(1+r.Intn(2)) + old, new + new} {
			os.WriteFile(filepath.Join(ws, "f.txt"), []byte(cur), 0o644)
			os.WriteFile(filepath.Join(ws, "p.patch"), sec, 0o644)
			_, gerr := run(t, ws, "git", "apply", "--check", "p.patch")
			_, ourErr := ApplyPatch(context.Background(), ws, sec, Selection{}, ApplyOptions{DryRun: true})
			if gerr != nil && ourErr == nil {
				t.Fatalf("case %d: git refuses the patch where it is taken:\nold %q\nnew %q\ncur %q\n%s", i, old, new, cur, sec)
			}
			if gerr != nil {
				refused++
				continue
			}
			if ourErr != nil {
				continue // git found the hunk at another line; we match at the stated one only
			}
			if _, err := ApplyPatch(context.Background(), ws, sec, Selection{}, ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			ours, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
			os.WriteFile(filepath.Join(ws, "f.txt"), []byte(cur), 0o644)
			if out, err := run(t, ws, "git", "apply", "p.patch"); err != nil {
				t.Fatalf("git apply: %v %s", err, out)
			}
			theirs, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
			if string(ours) != string(theirs) {
				t.Fatalf("case %d: applied to %q, ours gives %q, git %q\n%s", i, cur, ours, theirs, sec)
			}
			agreed++
		}
	}
	if refused == 0 || agreed == 0 {
		t.Fatalf("%d refused by both, %d applied alike: the cases do not cover both", refused, agreed)
	}
	t.Logf("%d refused by git and by us, %d applied alike", refused, agreed)
}

// A person's chmod +x between the review and the apply stays (the patch does not change the
// mode), with git apply's warning, as real git apply does it on the same patch.
func TestApplyKeepsAModeThePatchDoesNotChange(t *testing.T) {
	needGit(t)
	ws, paths := prepared(t, map[string]string{"bin/run.sh": "F:echo one\n", "bin/other.sh": "X:echo two\n"})
	os.WriteFile(filepath.Join(paths.WorkDir, "bin/run.sh"), []byte("echo ONE\n"), 0o644)
	os.WriteFile(filepath.Join(paths.WorkDir, "bin/other.sh"), []byte("echo TWO\n"), 0o755)
	if _, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"}); err != nil {
		t.Fatal(err)
	}
	gitWS := copyTree(t, ws)
	for _, dir := range []string{ws, gitWS} {
		os.Chmod(filepath.Join(dir, "bin/run.sh"), 0o755)
		os.Chmod(filepath.Join(dir, "bin/other.sh"), 0o644)
	}
	res, err := Apply(context.Background(), ws, paths.AgentDir, Selection{}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, gitWS, "git", "apply", filepath.Join(paths.AgentDir, PatchFile))
	if err != nil {
		t.Fatalf("git apply: %v %s", err, out)
	}
	for _, w := range []string{"bin/run.sh has type 100755, expected 100644", "bin/other.sh has type 100644, expected 100755"} {
		if !strings.Contains(strings.Join(res.Warnings, "\n"), w) || !strings.Contains(out, "warning: "+w) {
			t.Errorf("warning %q: ours %q, git's %q", w, res.Warnings, out)
		}
	}
	if d := diffSnapshots(snapshot(t, gitWS, true), snapshot(t, ws, true)); d != "" {
		t.Fatalf("the apply's tree differs from git apply's:\n%s", d)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "bin/run.sh")); fi.Mode().Perm() != 0o755 {
		t.Fatalf("the person's chmod +x was undone: %o", fi.Mode().Perm())
	}
}
