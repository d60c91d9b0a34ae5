//go:build unix

package snapshot

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// BenchmarkWholeRepoTurns is the cost of keeping a whole-repository worker's sandbox at the end
// of every turn (make bench, part "forks"), on a copy of Go's own src/ (SNAPSHOT_BENCH_SRC
// names another tree), against the two ways of getting such a copy otherwise: cp -a and git
// worktree add. Run it with -benchtime 1x: each figure is the best of three.
func BenchmarkWholeRepoTurns(b *testing.B) {
	src := os.Getenv("SNAPSHOT_BENCH_SRC")
	if src == "" {
		src = filepath.Join(runtime.GOROOT(), "src")
	}
	tmp := b.TempDir()
	// tree is the sandbox's copy (what cp -a and the snapshots read), repo the same files in a
	// git repository (what git worktree add checks out).
	tree, repo := filepath.Join(tmp, "tree"), filepath.Join(tmp, "repo")
	cmd(b, "cp", "-a", src, tree)
	cmd(b, "cp", "-a", src, repo)
	gitIn(b, repo, "init", "-q")
	gitIn(b, repo, "add", "-A")
	gitIn(b, repo, "-c", "gc.auto=0", "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "-m", "tree")
	files, size := treeSize(b, tree)
	fmt.Printf("tree: %s, %d files, %.1f MB\n", src, files, mb(size))

	for i := 0; i < b.N; i++ {
		row := func(name string, d time.Duration, disk int64, note string) {
			fmt.Printf("  %-44s %10.1f ms  %9.1f MB  %s\n", name, float64(d.Microseconds())/1000, mb(disk), note)
		}
		n := 0
		next := func() string { n++; return filepath.Join(tmp, fmt.Sprintf("x%d", n)) }
		cp := best(func() time.Duration { return timed(func() { cmd(b, "cp", "-a", tree, next()) }) })
		row("cp -a of the tree", cp, size, "the baseline: a copy")
		wt := best(func() time.Duration {
			return timed(func() { cmd(b, "git", "-C", repo, "-c", "gc.auto=0", "worktree", "add", "-q", "--detach", next()) })
		})
		row("git worktree add", wt, size, "a checkout of the same tree")
		cmd(b, "git", "-C", repo, "status", "--porcelain") // its index refreshed once
		st := best(func() time.Duration { return timed(func() { cmd(b, "git", "-C", repo, "status", "--porcelain") }) })
		row("git status (an lstat of every file)", st, 0, "for scale: what a turn's snapshot must at least do")

		ws := filepath.Join(tmp, fmt.Sprintf("ws%d", i))
		os.MkdirAll(ws, 0o755)
		s, err := Open(ws, "run_bench")
		must(b, err)
		var tr Tracker
		var first Result
		base := timed(func() { first, err = tr.Take(s, tree, Limits{}) })
		must(b, err)
		store := storeSize(ws)
		row("first snapshot (every file hashed and stored)", base, store, fmt.Sprintf("%.2f× cp -a", ratio(base, cp)))
		again := best(func() time.Duration {
			var t2 Tracker
			return timed(func() { _, err = t2.Take(s, tree, Limits{}) })
		})
		row("first snapshot of a run, blobs already kept", again, storeSize(ws)-store, "another run of the same repository")
		settleTree(b, tree)
		tr.Take(s, tree, Limits{}) // the stamps are settled now
		same := best(func() time.Duration { return timed(func() { _, err = tr.Take(s, tree, Limits{}) }) })
		row("turn snapshot, nothing changed", same, 0, fmt.Sprintf("%.3f× cp -a", ratio(same, cp)))

		var last Result
		before := storeSize(ws)
		turn := best(func() time.Duration {
			editSome(b, tree)
			return timed(func() { last, err = tr.Take(s, tree, Limits{}) })
		})
		must(b, err)
		row("turn snapshot, 5 files edited, 1 added", turn, (storeSize(ws)-before)/3, fmt.Sprintf("%.3f× cp -a; %d hashed, %d objects new", ratio(turn, cp), last.Hashed, last.Stored))

		co := best(func() time.Duration { return timed(func() { must(b, Checkout(s, last.Tree, next(), false, nil)) }) })
		row("restore a turn (checkout into a new folder)", co, size, fmt.Sprintf("%.2f× cp -a", ratio(co, cp)))
		dir := next()
		must(b, Checkout(s, last.Tree, dir, false, nil))
		var ct Tracker
		must(b, ct.Prime(s, dir, last.Tree))
		sw := best(func() time.Duration {
			return timed(func() {
				must(b, Switch(s, dir, last.Tree, first.Tree, &ct))
				must(b, Switch(s, dir, first.Tree, last.Tree, &ct))
			}) / 2
		})
		row("replay: move a sandbox between two turns", sw, 0, "")
		s.Close()
	}
}

// editSome changes five files in place and adds one, as an agent's turn does.
func editSome(b *testing.B, tree string) {
	b.Helper()
	k := 0
	filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || k >= 5 || !strings.HasSuffix(p, ".go") || strings.Contains(p, "/.git/") {
			return err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			fmt.Fprintf(f, "\n// edited at %d\n", time.Now().UnixNano())
			f.Close()
			k++
		}
		return nil
	})
	must(b, os.WriteFile(filepath.Join(tree, fmt.Sprintf("new_%d.go", time.Now().UnixNano())), []byte("package x\n"), 0o644))
}

// settleTree waits until the tree's files are older than the racy margin, as they are when a
// turn ends after minutes: a condition on the clock.
func settleTree(b *testing.B, tree string) {
	for end := time.Now().Add(coarseRacyMargin); time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
}

func best(f func() time.Duration) time.Duration {
	d := f()
	for i := 0; i < 2; i++ {
		d = min(d, f())
	}
	return d
}

func timed(f func()) time.Duration {
	t := time.Now()
	f()
	return time.Since(t)
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

func gitIn(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd(b, "git", append([]string{"-C", dir}, args...)...)
}

func cmd(b *testing.B, name string, args ...string) {
	b.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// treeSize counts a tree's files (not .git's) and their bytes.
func treeSize(b *testing.B, dir string) (int, int64) {
	var n int
	var size int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if fi, e := d.Info(); err == nil && e == nil && fi.Mode().IsRegular() {
			n++
			size += fi.Size()
		}
		return nil
	})
	return n, size
}

func storeSize(ws string) int64 {
	var size int64
	filepath.WalkDir(filepath.Join(ws, Dir), func(p string, d fs.DirEntry, err error) error {
		if fi, e := d.Info(); err == nil && e == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
		return nil
	})
	return size
}
