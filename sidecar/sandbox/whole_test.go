package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
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
