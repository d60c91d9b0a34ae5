package proposal

import (
	"bytes"
	"context"
	"fmt"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// snapshot is a full picture of a tree: every folder, file (with mode) and symlink.
func snapshot(t testing.TB, dir string, skipInternal bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if skipInternal && (rel == ".agentcanvas" || rel == ".git") {
			return fs.SkipDir
		}
		if lockArtifact(rel) {
			return nil // the workspace lock (and the folders of it and the temporary files)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			out[rel] = "L:" + tgt
		case fi.IsDir():
			out[rel] = fmt.Sprintf("D:%o", fi.Mode().Perm())
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("F:%o:%s", fi.Mode().Perm(), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// files keeps only files (exec bit, not the full mode) and symlinks: what git records.
func gitView(s map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range s {
		switch {
		case strings.HasPrefix(v, "D:"):
		case strings.HasPrefix(v, "F:"):
			parts := strings.SplitN(v, ":", 3)
			x := "-"
			if strings.ContainsAny(parts[1][:1], "157") {
				x = "x"
			}
			out[k] = "F" + x + ":" + parts[2]
		default:
			out[k] = v
		}
	}
	return out
}

func diffSnapshots(a, b map[string]string) string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		if a[k] != b[k] {
			fmt.Fprintf(&sb, "  %q: %.60q != %.60q\n", k, a[k], b[k])
		}
	}
	return sb.String()
}

func run(t testing.TB, dir string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// writeTree creates files from a map: "F:content" (mode 644), "X:content" (755), "L:target".
func writeTree(t testing.TB, dir string, tree map[string]string) {
	t.Helper()
	for p, v := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		kind, data := v[:2], v[2:]
		var err error
		switch kind {
		case "F:":
			err = os.WriteFile(full, []byte(data), 0o644)
		case "X:":
			err = os.WriteFile(full, []byte(data), 0o755)
		case "L:":
			err = os.Symlink(data, full)
		default:
			t.Fatalf("bad tree entry %q", v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// copyTree copies dir to a new temp folder, leaving out .agentcanvas.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	out, err := run(t, src, "sh", "-c", `tar --exclude=./.agentcanvas -cf - . | (cd "$0" && tar -xpf -)`, dst)
	if err != nil {
		t.Fatalf("copy: %v %s", err, out)
	}
	return dst
}

// prepared makes a workspace from tree and a sandbox holding every top-level entry.
func prepared(t testing.TB, tree map[string]string) (ws string, paths sandbox.Paths) {
	t.Helper()
	ws = t.TempDir()
	writeTree(t, ws, tree)
	tops := map[string]bool{}
	for p := range tree {
		tops[strings.SplitN(p, "/", 2)[0]] = true
	}
	var files []string
	for p := range tops {
		files = append(files, p)
	}
	sort.Strings(files)
	paths, err := sandbox.Prepare(context.Background(), sandbox.Options{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1", Files: files})
	if err != nil {
		t.Fatal(err)
	}
	return ws, paths
}

// lockArtifact: the workspace lock's file and folders, which any apply (even a refused one)
// may create, and the empty folder of temporary files.
func lockArtifact(rel string) bool {
	for _, a := range []string{".agentcanvas", wslock.File, tmpDir} {
		if rel == a || strings.HasSuffix(rel, "/"+a) {
			return true
		}
	}
	return false
}
