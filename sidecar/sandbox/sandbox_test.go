package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

func write(t *testing.T, dir string, tree map[string]string) {
	t.Helper()
	for p, v := range tree {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		var err error
		switch v[:2] {
		case "F:":
			err = os.WriteFile(full, []byte(v[2:]), 0o644)
		case "X:":
			err = os.WriteFile(full, []byte(v[2:]), 0o755)
		case "L:":
			err = os.Symlink(v[2:], full)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// listing is every path under dir with its kind and mode.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, _ := os.Lstat(p)
		rel, _ := filepath.Rel(dir, p)
		if filepath.Base(rel) == ".agentcanvas" || strings.HasSuffix(rel, "/"+wslock.File) {
			return nil // the workspace lock, which every writer takes (and leaves)
		}
		s := fmt.Sprintf("%s %v", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			s += " " + string(b)
		}
		out = append(out, s)
		return nil
	})
	sort.Strings(out)
	return out
}

func baseTree(t *testing.T) (parent, ws string) {
	parent = t.TempDir()
	ws = filepath.Join(parent, "ws")
	write(t, ws, map[string]string{
		".gitignore":              "F:*.log\n!keep.log\n/build/\n",
		"src/a.go":                "F:package a\n",
		"src/run.sh":              "X:#!/bin/sh\n",
		"src/debug.log":           "F:ignored\n",
		"src/keep.log":            "F:kept\n",
		"src/sub/.gitignore":      "F:secret.txt\n",
		"src/sub/secret.txt":      "F:ignored by nested\n",
		"src/sub/ok.txt":          "F:ok\n",
		"src/node_modules/m/i.js": "F:skipped\n",
		"src/.git/HEAD":           "F:skipped\n",
		"src/link":                "L:a.go",
		"build/out.bin":           "F:ignored\n",
		"README.md":               "F:readme\n",
		"realdir/x.txt":           "F:x\n",
		"linkdir":                 "L:realdir",
		"outlink":                 "L:../outside",
		"abslink":                 "L:/etc/passwd",
		"escaping/inner/bad":      "L:../../../outside/secret",
		".git/config":             "F:[core]\n",
		"node_modules/x/index.js": "F:x\n",
		"dist/app.js":             "F:x\n",
		"with space/é \"q\".txt":  "F:odd\n",
	})
	write(t, parent, map[string]string{"outside/secret": "F:secret\n"})
	return parent, ws
}

func TestPrepareCopiesHonouringGitignore(t *testing.T) {
	_, ws := baseTree(t)
	var last, total int
	p, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "run_1", AgentID: "custom:coder-1",
		Files: []string{"src", "README.md", "./with space/é \"q\".txt"}, Progress: func(d, n int) { last, total = d, n }})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.AgentDir, filepath.FromSlash(".agentcanvas/sandboxes/run_1/custom_coder-1")) {
		t.Fatalf("agent dir %s", p.AgentDir)
	}
	want := []string{"README.md", "src/a.go", "src/keep.log", "src/link", "src/run.sh", "src/sub/.gitignore", "src/sub/ok.txt", "with space/é \"q\".txt"}
	m, err := ReadMeta(ws, "run_1", "custom:coder-1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Files, "|") != strings.Join(want, "|") {
		t.Fatalf("copied %q\nwant   %q", m.Files, want)
	}
	if last != total || total != len(want) {
		t.Fatalf("progress %d/%d", last, total)
	}
	for _, side := range []string{p.InputDir, p.WorkDir} {
		for _, f := range want {
			a, _ := os.ReadFile(filepath.Join(ws, f))
			b, err := os.ReadFile(filepath.Join(side, f))
			if err != nil || string(a) != string(b) {
				t.Fatalf("%s/%s: %v", side, f, err)
			}
		}
		if tgt, _ := os.Readlink(filepath.Join(side, "src/link")); tgt != "a.go" {
			t.Fatalf("symlink not kept: %q", tgt)
		}
	}
	// input/ is read-only, work/ writable, exec bits kept.
	fi, _ := os.Stat(filepath.Join(p.InputDir, "src/run.sh"))
	if fi.Mode().Perm() != 0o555 {
		t.Fatalf("input run.sh %v", fi.Mode())
	}
	fi, _ = os.Stat(filepath.Join(p.InputDir, "src/a.go"))
	if fi.Mode().Perm() != 0o444 {
		t.Fatalf("input a.go %v", fi.Mode())
	}
	for _, d := range []string{p.InputDir, filepath.Join(p.InputDir, "src/sub")} {
		if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o555 {
			t.Fatalf("input folder %s %v", d, fi.Mode())
		}
	}
	if fi, _ := os.Stat(filepath.Join(p.WorkDir, "src/run.sh")); fi.Mode().Perm() != 0o755 {
		t.Fatalf("work run.sh %v", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Join(p.WorkDir, "src/a.go")); fi.Mode().Perm() != 0o644 {
		t.Fatalf("work a.go %v", fi.Mode())
	}
	if _, err := os.Stat(p.ProposalDir); err != nil {
		t.Fatal(err)
	}
	// A second prepare of the same sandbox is refused; Remove clears it, read-only parts too.
	if _, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "run_1", AgentID: "custom:coder-1", Files: []string{"README.md"}}); err == nil {
		t.Fatal("prepared twice")
	}
	if err := Remove(ws, "run_1", "custom:coder-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.AgentDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("not removed")
	}
}

func TestPrepareRecordsGitHead(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ws := t.TempDir()
	write(t, ws, map[string]string{"a.txt": "F:a\n"})
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+ws, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if GitHead(ws) != "" {
		t.Fatal("head outside a repository")
	}
	git("init", "-q", ".")
	if GitHead(ws) != "" {
		t.Fatal("head of an unborn branch")
	}
	git("add", "a.txt")
	git("commit", "-qm", "x")
	head := git("rev-parse", "HEAD")
	if _, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "a", Files: []string{"a.txt"}}); err != nil {
		t.Fatal(err)
	}
	m, _ := ReadMeta(ws, "r", "a")
	if m.Base.GitHead != head {
		t.Fatalf("gitHead %q, want %q", m.Base.GitHead, head)
	}
	b, _ := json.Marshal(m)
	if !strings.Contains(string(b), `"gitHead":"`+head) {
		t.Fatal(string(b))
	}
	// A linked worktree: its HEAD names a branch whose ref is in the main repository's folder.
	linked := filepath.Join(t.TempDir(), "linked")
	git("worktree", "add", "-q", "-b", "feature", linked)
	cmd := exec.Command("git", "-C", linked, "commit", "-q", "--allow-empty", "-m", "on the branch")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+ws, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if got, want := GitHead(linked), git("rev-parse", "feature"); got != want || got == head {
		t.Fatalf("the linked worktree's head is %q, want %q (the main checkout's is %q)", got, want, head)
	}
	if GitHead(ws) != head {
		t.Fatal("the main checkout's head moved")
	}
}

func TestPrepareRefusalsCreateNothing(t *testing.T) {
	parent, ws := baseTree(t)
	fifo := filepath.Join(ws, "fifo")
	mkfifo(t, fifo)
	before := listing(t, parent)
	cases := []struct {
		name         string
		run, agent   string
		files        []string
		reasonSubstr string
	}{
		{"dotdot", "r", "a", []string{"src/a.go", "src/../../outside/secret"}, "'..'"},
		{"absolute", "r", "a", []string{"/etc/passwd"}, "absolute"},
		{"git", "r", "a", []string{".git/config"}, ".git/"},
		{"GIT any case", "r", "a", []string{".GIT/config"}, ".git/"},
		{"node_modules", "r", "a", []string{"node_modules"}, "node_modules"},
		{"dist", "r", "a", []string{"dist/app.js"}, "dist"},
		{"internal", "r", "a", []string{".agentcanvas"}, ".agentcanvas"},
		{"missing", "r", "a", []string{"README.md", "nope.txt"}, "does not exist"},
		{"through a symlinked folder", "r", "a", []string{"linkdir/x.txt"}, "symlink"},
		{"through a symlink out", "r", "a", []string{"outlink/secret"}, "leads out of the workspace"},
		{"a symlink out", "r", "a", []string{"outlink"}, "leads out of the workspace"},
		{"an absolute symlink", "r", "a", []string{"abslink"}, "leads out of the workspace"},
		{"a fifo", "r", "a", []string{"fifo"}, "not a regular file"},
		{"bad run id", "../x", "a", []string{"README.md"}, "run id"},
		{"empty run id", "", "a", []string{"README.md"}, "run id"},
		{"run id with slash", "a/b", "a", []string{"README.md"}, "run id"},
		{"hidden run id", ".x", "a", []string{"README.md"}, "run id"},
		{"agent named node_modules", "r", "node_modules", []string{"README.md"}, "internal folder"},
		{"empty agent", "r", "", []string{"README.md"}, "agent id"},
		{"no files", "r", "a", nil, "no files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Prepare(context.Background(), Options{Workspace: ws, RunID: c.run, AgentID: c.agent, Files: c.files})
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), c.reasonSubstr) {
				t.Fatalf("got %v, want a refusal mentioning %q", err, c.reasonSubstr)
			}
			if d := strings.Join(listing(t, parent), "\n"); d != strings.Join(before, "\n") {
				t.Fatalf("something was created:\n%s", d)
			}
		})
	}
}

// The person's rules: a file outside the allowed folders, or in a folder they blocked, is
// refused by name and rule with nothing created; a blocked folder met inside a copied folder
// is skipped, as the built-in ones are.
func TestPrepareHonoursAllowedAndBlockedFolders(t *testing.T) {
	parent, ws := baseTree(t)
	rules, errs := safepath.Config{Allowed: []string{"src", "with space"}, Blocked: []string{"src/sub"},
		AllowedFrom: "agentcanvas.allowedFolders", BlockedFrom: "agentcanvas.blockedFolders"}.Rules(ws)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	before := listing(t, parent)
	for files, want := range map[string]string{
		"README.md":        `sandbox refused: README.md: outside the allowed folders [src, with space] (agentcanvas.allowedFolders)`,
		"src/a.go,realdir": `sandbox refused: realdir: outside the allowed folders [src, with space] (agentcanvas.allowedFolders)`,
		"src/sub/ok.txt":   `sandbox refused: src/sub/ok.txt: in the blocked folder src/sub (agentcanvas.blockedFolders)`,
		"src/node_modules": `sandbox refused: src/node_modules: the internal folder node_modules/ is not allowed`,
	} {
		_, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "a", Files: strings.Split(files, ","), Rules: rules})
		var re *RefusedError
		if !errors.As(err, &re) || err.Error() != want {
			t.Errorf("%s: got %v, want %s", files, err, want)
		}
		if d := strings.Join(listing(t, parent), "\n"); d != strings.Join(before, "\n") {
			t.Fatalf("%s: something was created:\n%s", files, d)
		}
	}
	if _, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "a", Files: []string{"src"}, Rules: rules}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMeta(ws, "r", "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		if strings.HasPrefix(f, "src/sub/") {
			t.Errorf("the blocked folder src/sub was copied: %v", m.Files)
		}
	}
	if !slices.Contains(m.Files, "src/a.go") {
		t.Errorf("files: %v", m.Files)
	}
}

func TestPrepareCancelledPartWayLeavesNothing(t *testing.T) {
	parent, ws := baseTree(t)
	for i := 0; i < 200; i++ {
		write(t, ws, map[string]string{fmt.Sprintf("many/f%03d.txt", i): "F:x\n"})
	}
	before := listing(t, parent)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Prepare(ctx, Options{Workspace: ws, RunID: "r", AgentID: "a", Files: []string{"many"}, Workers: 1,
		Progress: func(done, total int) {
			if done == 50 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if d := strings.Join(listing(t, parent), "\n"); d != strings.Join(before, "\n") {
		t.Fatal("a cancelled prepare left files behind")
	}
}

func TestSanitiseAgentID(t *testing.T) {
	for in, want := range map[string]string{"custom:coder-1": "custom_coder-1", "a/b": "a_b", "../x": "___x", "ok.v2": "ok.v2", "é": "_", ".git": "_git", "..": "__"} {
		got, err := SanitiseAgentID(in)
		if err != nil || got != want {
			t.Errorf("%q: got %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "node_modules", "dist", "DIST"} {
		if _, err := SanitiseAgentID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
