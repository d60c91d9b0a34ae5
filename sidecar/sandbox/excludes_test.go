package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitFiles is what git would hold in a worktree of dir: tracked files and the untracked ones
// no excludes or .gitignore leave out.
func gitFiles(t *testing.T, dir string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	slices.Sort(files)
	return files
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// A whole-repository sandbox holds what git's own listing holds, with real git as the oracle:
// the repository's info/exclude (here keeping a local secrets file out) and the person's global
// excludes file are read before the .gitignore files, whose negation still wins over them, in
// the main checkout and in a linked worktree (whose info/exclude is the common folder's).
func TestWholeSandboxReadsGitsExcludes(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	writeFiles := func(dir string, files map[string]string) {
		for name, data := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeFiles(home, map[string]string{"config/git/ignore": "*.log\n"})
	ws := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(ws, 0o755)
	gitIn(t, ws, "init", "-q")
	gitIn(t, ws, "config", "user.email", "t@example.com")
	gitIn(t, ws, "config", "user.name", "t")
	writeFiles(ws, map[string]string{"src/a.go": "package a\n", ".gitignore": "!keep.log\n"})
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-qm", "first")
	writeFiles(ws, map[string]string{
		".git/info/exclude": "secrets.env\nscratch/\n",
		"secrets.env":       "TOKEN=mine\n", "scratch/notes.md": "mine\n", "src/debug.log": "noise\n",
		"keep.log": "kept by the .gitignore's negation\n", "src/new.go": "package a\n",
	})
	wt := filepath.Join(filepath.Dir(ws), "linked")
	gitIn(t, ws, "worktree", "add", "-q", wt)
	writeFiles(wt, map[string]string{"secrets.env": "TOKEN=mine\n", "other.log": "noise\n", "src/wt.go": "package a\n"})
	for _, dir := range []string{ws, wt} {
		if _, err := Prepare(context.Background(), Options{Workspace: dir, RunID: "r", AgentID: "w", Files: []string{"."}}); err != nil {
			t.Fatal(err)
		}
		m, err := ReadMeta(dir, "r", "w")
		if err != nil {
			t.Fatal(err)
		}
		want := slices.DeleteFunc(gitFiles(t, dir), func(f string) bool { return strings.HasPrefix(f, ".agentcanvas/") })
		if !slices.Equal(m.Files, want) {
			t.Errorf("%s: the sandbox holds %q\ngit would hold     %q", filepath.Base(dir), m.Files, want)
		}
		if slices.Contains(m.Files, "secrets.env") {
			t.Errorf("%s: info/exclude's secrets.env reached the sandbox", filepath.Base(dir))
		}
	}
}
