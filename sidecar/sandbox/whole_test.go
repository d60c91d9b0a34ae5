package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// TestPrepareWholeWorkspace: "." copies every file git would not ignore, like a worktree,
// skips the blocked folders, and keeps symlinks as links, also those leading out of the
// workspace (not followed: the outside file is not copied).
func TestPrepareWholeWorkspace(t *testing.T) {
	_, ws := baseTree(t)
	os.Remove(filepath.Join(ws, "fifo"))
	p, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "w", Files: []string{"."}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadMeta(ws, "r", "w")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".gitignore", "README.md", "abslink", "escaping/inner/bad", "linkdir", "outlink", "realdir/x.txt",
		"src/a.go", "src/keep.log", "src/link", "src/run.sh", "src/sub/.gitignore", "src/sub/ok.txt", "with space/é \"q\".txt"}
	if strings.Join(m.Files, "|") != strings.Join(want, "|") || strings.Join(m.Requested, "|") != "." {
		t.Fatalf("copied %q (requested %q)\nwant   %q", m.Files, m.Requested, want)
	}
	for _, l := range []struct{ name, target string }{{"abslink", "/etc/passwd"}, {"escaping/inner/bad", "../../../outside/secret"}, {"linkdir", "realdir"}} {
		for _, side := range []string{p.InputDir, p.WorkDir} {
			fi, err := os.Lstat(filepath.Join(side, l.name))
			if err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("%s in %s is not a symlink: %v", l.name, side, err)
			}
			if got, _ := os.Readlink(filepath.Join(side, l.name)); got != l.target {
				t.Fatalf("%s -> %q, want %q", l.name, got, l.target)
			}
		}
	}
}

// TestPrepareWholeWorkspaceKeepsToAllowedFolders: with allowed folders set, "." copies what
// lies inside them and nothing else, passing through the folders above them.
func TestPrepareWholeWorkspaceKeepsToAllowedFolders(t *testing.T) {
	_, ws := baseTree(t)
	os.Remove(filepath.Join(ws, "fifo"))
	rules := safepath.Rules{Allowed: []string{"src/sub", "README.md"}, Blocked: []string{"realdir"}}
	if _, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "w", Files: []string{"."}, Rules: rules}); err != nil {
		t.Fatal(err)
	}
	m, _ := ReadMeta(ws, "r", "w")
	if got := strings.Join(m.Files, "|"); got != "README.md|src/sub/.gitignore|src/sub/ok.txt" {
		t.Fatalf("copied %s", got)
	}
}

// TestPrepareLinksSharedFolders: a shared folder becomes a link in work/ only (to the
// workspace's folder, absolute), recorded in sandbox.json; a copied one stays a copy; a
// missing, symlinked or climbing one is refused with nothing created.
func TestPrepareLinksSharedFolders(t *testing.T) {
	_, ws := baseTree(t)
	os.Remove(filepath.Join(ws, "fifo"))
	write(t, ws, map[string]string{"web/node_modules/x/i.js": "F:x\n"})
	p, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "w", Files: []string{"README.md"},
		Shared: []string{"node_modules", "web/node_modules"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"node_modules", "web/node_modules"} {
		got, err := os.Readlink(filepath.Join(p.WorkDir, s))
		if want := filepath.Join(ws, s); err != nil || got != want {
			t.Fatalf("work/%s -> %q (%v), want %q", s, got, err, want)
		}
		if _, err := os.Lstat(filepath.Join(p.InputDir, s)); err == nil {
			t.Fatalf("input/%s exists", s)
		}
	}
	m, _ := ReadMeta(ws, "r", "w")
	if strings.Join(m.Shared, "|") != "node_modules|web/node_modules" {
		t.Fatalf("sandbox.json shared %q", m.Shared)
	}
	if _, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r2", AgentID: "w", Files: []string{"realdir"}, Shared: []string{"realdir"}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := ReadMeta(ws, "r2", "w"); len(m.Shared) != 0 {
		t.Fatalf("a copied folder was linked too: %q", m.Shared)
	}
	for _, bad := range []string{"nope", "linkdir", "../outside", ".agentcanvas", "README.md"} {
		_, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r3", AgentID: "w", Files: []string{"README.md"}, Shared: []string{bad}})
		var re *RefusedError
		if !errors.As(err, &re) {
			t.Fatalf("shared %q: %v, want a refusal", bad, err)
		}
		if _, err := os.Lstat(filepath.Join(ws, ".agentcanvas/sandboxes/r3")); err == nil {
			t.Fatalf("shared %q: the refused sandbox left its run folder", bad)
		}
	}
}

// TestPrepareWholeWorkspaceKeepsTrackedBuildFolders: a folder named dist or node_modules is
// blocked (agents never write there, proposals never hold it), but the files git tracks in it
// are source: the whole workspace's sandbox has them (Go's src/cmd/dist, a vendored package),
// and nothing else of the folder (build output, installed packages). A folder the person
// blocked stays out, tracked or not. git ls-files is the oracle.
func TestPrepareWholeWorkspaceKeepsTrackedBuildFolders(t *testing.T) {
	ws := t.TempDir()
	files := map[string]string{
		"go/src/cmd/dist/build.go":   "package main\n",
		"go/src/cmd/dist/README":     "dist builds the toolchain\n",
		"web/dist/app.js":            "tracked bundle\n",
		"web/node_modules/vend/x.js": "vendored\n",
		"secret/dist/s.txt":          "blocked by the person\n",
		".gitignore":                 "dist/\nnode_modules/\n",
	}
	for name, body := range files {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	git("add", "-f", ".")
	// Untracked: build output and installed packages.
	for _, name := range []string{"go/src/cmd/dist/dist.o", "web/dist/chunk.js", "web/node_modules/leftpad/i.js", "node_modules/top/i.js"} {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(ws, name), []byte("built\n"), 0o644)
	}
	rules := safepath.Rules{Blocked: []string{"secret"}}
	if _, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "w", Files: []string{"."}, Rules: rules}); err != nil {
		t.Fatal(err)
	}
	m, _ := ReadMeta(ws, "r", "w")
	var want []string
	for _, f := range strings.Fields(git("ls-files", "--", ".", ":!secret")) {
		want = append(want, f)
	}
	if got := strings.Join(m.Files, " "); got != strings.Join(want, " ") {
		t.Fatalf("copied %s\nwant (git ls-files) %s", got, strings.Join(want, " "))
	}
	// A folder asked for by name walks the same way.
	if _, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "v", Files: []string{"go/src"}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := ReadMeta(ws, "r", "v"); strings.Join(m.Files, " ") != "go/src/cmd/dist/README go/src/cmd/dist/build.go" {
		t.Errorf("go/src copied %q", m.Files)
	}
}

// A sandbox prepared while an apply holds the workspace lock is listed once the apply is done:
// not the apply's temporary files (gone by then: copying them would fail), and with the files
// it added.
func TestPrepareListsTheWorkspaceUnderItsLock(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	temp := filepath.Join(ws, ".agentcanvas-0123456789abcdef.tmp") // an apply's, beside its target
	os.WriteFile(temp, []byte("half\n"), 0o644)
	lk, err := wslock.Acquire(context.Background(), ws, "applying a proposal", wslock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "w", Files: []string{"."}, Waiting: func(string) { close(waiting) }})
		done <- err
	}()
	<-waiting // Prepare listed the workspace once (the refusals) and waits for the lock
	os.Remove(temp)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b\n"), 0o644)
	lk.Release()
	if err := <-done; err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if m, _ := ReadMeta(ws, "r", "w"); strings.Join(m.Files, " ") != "a.txt b.txt" {
		t.Errorf("copied %q, want the workspace as the apply left it", m.Files)
	}
}
