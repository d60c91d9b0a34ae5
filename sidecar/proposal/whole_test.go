package proposal

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// hashView is path → kind, exec bit and content hash of every file and symlink under dir
// (.agentcanvas and .git left out): what git records, without holding the contents.
func hashView(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".agentcanvas" || rel == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			tgt, _ := os.Readlink(p)
			out[rel] = "L:" + tgt
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("F%v:%x", fi.Mode()&0o100 != 0, sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWholeWorkspaceRoundTripsGoSource: the Go toolchain's src/ as a workspace, prepared
// whole ("."), changed in work/ (edits, a file over 1 MiB, an exec bit, a deletion, new files
// and folders), proposed and applied; git apply of the same patch to a copy of the workspace
// is the oracle, and ours must give the same tree.
func TestWholeWorkspaceRoundTripsGoSource(t *testing.T) {
	needGit(t)
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	ws := t.TempDir()
	if out, err := exec.Command("cp", "-a", filepath.Join(strings.TrimSpace(string(out)), "src")+"/.", ws).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	ctx := context.Background()
	paths, err := sandbox.Prepare(ctx, sandbox.Options{Workspace: ws, RunID: "run1", AgentID: "w", Files: []string{sandbox.WholeWorkspace}})
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := sandbox.ReadMeta(ws, "run1", "w")
	if len(meta.Files) < 5000 {
		t.Fatalf("only %d files in the whole-workspace sandbox", len(meta.Files))
	}
	w := func(p string) string { return filepath.Join(paths.WorkDir, filepath.FromSlash(p)) }
	edits := 0
	for i, f := range meta.Files {
		if i%997 != 0 || !strings.HasSuffix(f, ".go") {
			continue
		}
		b, err := os.ReadFile(w(f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(w(f), append([]byte("// changed by the worker\n"), b...), 0o644)
		edits++
	}
	big := "cmd/compile/internal/ssa/rewriteAMD64.go" // over 1 MiB
	b, err := os.ReadFile(w(big))
	if err != nil || len(b) < 1<<20 {
		t.Fatalf("%s: %d bytes, %v", big, len(b), err)
	}
	os.WriteFile(w(big), append(b, "\n// appended\n"...), 0o644)
	os.Chmod(w("make.bash"), 0o644)
	os.Remove(w("strings/strings.go"))
	os.MkdirAll(w("newpkg/deep"), 0o755)
	os.WriteFile(w("newpkg/deep/new.go"), []byte("package deep\n"), 0o644)

	c, err := Create(ctx, CreateOptions{Workspace: ws, RunID: "run1", AgentID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Proposal.ChangedFiles); n != edits+4 {
		t.Fatalf("%d changed files, want %d: %v", n, edits+4, c.Proposal.ChangedFiles)
	}
	gws := copyTree(t, ws)
	patch := filepath.Join(paths.ProposalDir, "changes.patch")
	if out, err := run(t, gws, "git", "apply", patch); err != nil {
		t.Fatalf("git apply: %v\n%s", err, out)
	}
	if _, err := Apply(ctx, ws, filepath.Join(paths.ProposalDir, "proposal.json"), Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ours, gits := hashView(t, ws), hashView(t, gws)
	if d := diffSnapshots(ours, gits); d != "" {
		t.Fatalf("our apply differs from git's:\n%s", d)
	}
	for p, v := range hashView(t, paths.WorkDir) {
		if ours[p] != v {
			t.Fatalf("%s: workspace %q, work/ %q", p, ours[p], v)
		}
	}
}

// TestWholeWorkspaceEscapingLink: a link out of the workspace is copied as a link and is no
// reason to refuse the sandbox; a proposal that leaves it alone applies, one that points it
// elsewhere outside is refused by the check.
func TestWholeWorkspaceEscapingLink(t *testing.T) {
	ctx := context.Background()
	ws, _ := prepared(t, map[string]string{"a.txt": "F:a\n", "lib/site.py": "L:/etc/python3/sitecustomize.py"})
	sandbox.Remove(ws, "run1", "custom:coder-1")
	paths, err := sandbox.Prepare(ctx, sandbox.Options{Workspace: ws, RunID: "run1", AgentID: "w", Files: []string{"."}})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(paths.WorkDir, "a.txt"), []byte("b\n"), 0o644)
	c, err := Create(ctx, CreateOptions{Workspace: ws, RunID: "run1", AgentID: "w"})
	if err != nil || len(c.Proposal.ChangedFiles) != 1 || c.Proposal.ChangedFiles[0].Path != "a.txt" {
		t.Fatalf("changed %v, %v", c.Proposal.ChangedFiles, err)
	}
	ref := filepath.Join(paths.ProposalDir, "proposal.json")
	if _, err := Apply(ctx, ws, ref, Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(paths.WorkDir, "lib/site.py")
	os.Remove(link)
	os.Symlink("/etc/shadow", link)
	if _, err := Create(ctx, CreateOptions{Workspace: ws, RunID: "run1", AgentID: "w"}); err != nil {
		t.Fatal(err)
	}
	res, err := Check(ctx, ws, ref, Selection{}, ApplyOptions{})
	if err == nil && (res == nil || len(res.Problems) == 0) {
		t.Fatal("a proposal pointing a link at /etc/shadow passed the check")
	}
	if got, _ := os.Readlink(filepath.Join(ws, "lib/site.py")); got != "/etc/python3/sitecustomize.py" {
		t.Fatalf("the workspace's link now leads to %q", got)
	}
}

// Two whole-workspace workers (".") of a repository with ignored and shared folders: their
// edits of one line collide when the second proposal is made, edits apart merge when both
// are applied, and the ledger records each apply.
func TestWholeWorkspaceConflictsAndMerge(t *testing.T) {
	ws := t.TempDir()
	orig := numbered(30)
	putFile(t, filepath.Join(ws, "a.txt"), orig)
	putFile(t, filepath.Join(ws, ".gitignore"), "build/\n")
	putFile(t, filepath.Join(ws, "build", "out.o"), "ignored\n")
	putFile(t, filepath.Join(ws, "node_modules", "m", "i.js"), "shared\n")
	whole := func(run, agent string, edit func(string)) *Created {
		t.Helper()
		p, err := sandbox.Prepare(context.Background(), sandbox.Options{Workspace: ws, RunID: run, AgentID: agent, Files: []string{"."}, Shared: []string{"node_modules"}})
		if err != nil {
			t.Fatal(err)
		}
		edit(p.WorkDir)
		c, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: run, AgentID: agent})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	w1 := whole("r1", "w1", editLine(5, "w1"))
	w2 := whole("r1", "w2", editLine(5, "w2"))
	w3 := whole("r2", "w3", editLine(25, "w3"))
	if len(w1.Collisions) != 0 || len(w2.Collisions) != 1 || w2.Collisions[0].OtherAgentID != "w1" || len(w3.Collisions) != 0 {
		t.Fatalf("collisions: w1 %+v, w2 %+v, w3 %+v", w1.Collisions, w2.Collisions, w3.Collisions)
	}
	ctx := context.Background()
	for _, ref := range []string{agentRef(ws, "r1", "w1"), agentRef(ws, "r2", "w3")} {
		if _, err := Apply(ctx, ws, ref, Selection{}, ApplyOptions{}); err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
	}
	if got, want := readFile(t, filepath.Join(ws, "a.txt")), setLine(setLine(orig, 5, "w1"), 25, "w3"); got != want {
		t.Errorf("a.txt after both applies:\n%s\nwant\n%s", got, want)
	}
	if l, err := ReadLedger(ws); err != nil || len(l.Entries) != 2 {
		t.Errorf("ledger %+v (%v), want 2 entries", l, err)
	}
	if readFile(t, filepath.Join(ws, "node_modules", "m", "i.js")) != "shared\n" {
		t.Error("the shared node_modules changed")
	}
}
