package proposal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Names that exercise git's quoting and the "--- a/x\t" rule.
var oddNames = []string{"plain.txt", "with space.txt", `quo"te.md`, "café.txt", "日本語.go", "-dash", "#hash", "a b/c d.txt",
	"dir/sub/deep.txt", "dir/x.bin", "trailing.", "UPPER.TXT", "emoji😀.txt", "semi;colon", "per%cent", "star*.txt"}

var words = []string{"alpha", "beta", "gamma", "delta", "", "    indented", "func main() {", "}", "\tTab", "x", "y"}

func randText(r *rand.Rand) string {
	n := r.IntN(30)
	if r.IntN(5) == 0 {
		n = 100 + r.IntN(150) // long enough for several hunks
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(words[r.IntN(len(words))])
		if i < n-1 || r.IntN(4) != 0 {
			b.WriteByte('\n')
		}
	}
	if r.IntN(10) == 0 {
		return strings.ReplaceAll(b.String(), "\n", "\r\n")
	}
	return b.String()
}

func randBinary(r *rand.Rand) string {
	n := 1 + r.IntN(3000)
	b := make([]byte, n)
	for i := range b {
		if r.IntN(3) == 0 {
			b[i] = byte(r.IntN(256))
		} else {
			b[i] = "ab\x00\n"[r.IntN(4)]
		}
	}
	b[r.IntN(n)] = 0
	return string(b)
}

func randContent(r *rand.Rand) string {
	switch r.IntN(8) {
	case 0:
		return randBinary(r)
	case 1:
		return ""
	}
	return randText(r)
}

// randTree builds a base tree of files (and symlinks to them).
func randTree(r *rand.Rand) map[string]string {
	tree := map[string]string{}
	names := append([]string(nil), oddNames...)
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	n := 3 + r.IntN(len(names)-3)
	for _, p := range names[:n] {
		kind := "F:"
		if r.IntN(5) == 0 {
			kind = "X:"
		}
		tree[p] = kind + randContent(r)
	}
	// a symlink or two, to files in the same folder
	for i := 0; i < r.IntN(3); i++ {
		tree[fmt.Sprintf("link%d", i)] = "L:" + names[r.IntN(n)]
	}
	return tree
}

// editLines changes a text by inserting, deleting and replacing lines.
func editLines(r *rand.Rand, s string) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for k := 0; k < 1+r.IntN(4); k++ {
		i := 0
		if len(lines) > 0 {
			i = r.IntN(len(lines) + 1)
		}
		switch r.IntN(3) {
		case 0:
			lines = append(lines[:i], append([]string{words[r.IntN(len(words))] + "\n"}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		case 2:
			if i < len(lines) {
				lines[i] = "changed " + lines[i]
			}
		}
	}
	out := strings.Join(lines, "")
	if r.IntN(5) == 0 {
		out = strings.TrimSuffix(out, "\n") // lose the final newline
	}
	return out
}

// mutate edits the work folder at random.
func mutate(t *testing.T, r *rand.Rand, work string) {
	var paths []string
	filepath.Walk(work, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(work, p)
			paths = append(paths, rel)
		}
		return nil
	})
	sort.Strings(paths)
	for _, rel := range paths {
		full := filepath.Join(work, rel)
		fi, _ := os.Lstat(full)
		if r.IntN(3) == 0 {
			continue
		}
		isLink := fi.Mode()&os.ModeSymlink != 0
		switch r.IntN(7) {
		case 0:
			os.Remove(full)
		case 1: // exec bit
			if !isLink {
				os.Chmod(full, fi.Mode().Perm()^0o111)
			}
		case 2: // type change
			os.Remove(full)
			if isLink {
				os.WriteFile(full, []byte(randContent(r)), 0o644)
			} else {
				os.Symlink("plain.txt", full)
			}
		case 3:
			if isLink {
				os.Remove(full)
				os.Symlink("other target", full)
			} else {
				os.WriteFile(full, []byte(randContent(r)), fi.Mode().Perm())
			}
		default:
			if !isLink {
				b, _ := os.ReadFile(full)
				os.WriteFile(full, []byte(editLines(r, string(b))), fi.Mode().Perm())
			}
		}
	}
	// A file becomes a folder, and a folder becomes a file (or a symlink).
	if r.IntN(3) == 0 {
		for _, rel := range paths {
			full := filepath.Join(work, rel)
			if fi, err := os.Lstat(full); err == nil && fi.Mode().IsRegular() && !strings.Contains(rel, "/") {
				os.Remove(full)
				os.MkdirAll(full, 0o755)
				os.WriteFile(filepath.Join(full, "inner.txt"), []byte(randContent(r)), 0o644)
				break
			}
		}
	}
	if r.IntN(3) == 0 {
		for _, dir := range []string{"dir", "a b"} {
			full := filepath.Join(work, dir)
			if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
				os.RemoveAll(full)
				if r.IntN(2) == 0 {
					os.WriteFile(full, []byte(randContent(r)), 0o644)
				} else {
					os.Symlink("plain.txt", full)
				}
				break
			}
		}
	}
	for i := 0; i < r.IntN(3); i++ {
		p := filepath.Join(work, fmt.Sprintf("new%d/n é %d.txt", i, r.IntN(100)))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(randContent(r)), 0o644)
	}
}

func TestDifferentialAgainstGit(t *testing.T) {
	needGit(t)
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	for seed := 0; seed < seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			ws, paths := prepared(t, randTree(r))
			mutate(t, r, paths.WorkDir)
			ctx := context.Background()
			c, err := Create(ctx, CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"})
			if err != nil {
				t.Fatal(err)
			}
			patch := filepath.Join(paths.ProposalDir, "changes.patch")
			want := gitView(snapshot(t, paths.WorkDir, false))

			// git is the oracle: --check passes and git apply reproduces work/.
			gws := copyTree(t, ws)
			if out, err := run(t, gws, "git", "apply", "--check", patch); err != nil {
				b, _ := os.ReadFile(patch)
				t.Fatalf("git apply --check: %v\n%s\npatch:\n%s", err, out, b)
			}
			if out, err := run(t, gws, "git", "apply", patch); err != nil {
				t.Fatalf("git apply: %v\n%s", err, out)
			}
			if d := diffSnapshots(gitView(snapshot(t, gws, true)), want); d != "" {
				b, _ := os.ReadFile(patch)
				t.Fatalf("git apply did not reproduce work/:\n%s\npatch:\n%s", d, b)
			}

			// Our apply produces the same tree as git's.
			res, err := Apply(ctx, ws, filepath.Join(paths.ProposalDir, "proposal.json"), Selection{}, ApplyOptions{})
			if err != nil {
				b, _ := os.ReadFile(patch)
				t.Fatalf("Apply: %v\n%+v\npatch:\n%s", err, res, b)
			}
			if d := diffSnapshots(snapshotDirsToo(t, ws), snapshotDirsToo(t, gws)); d != "" {
				t.Fatalf("our apply differs from git's:\n%s", d)
			}
			if len(c.Proposal.ChangedFiles) != len(res.Files) && len(res.Files) < len(c.Proposal.ChangedFiles) {
				t.Fatalf("changedFiles %d, applied %d", len(c.Proposal.ChangedFiles), len(res.Files))
			}
		})
	}
}

// snapshotDirsToo compares files, symlinks and which folders exist (not folder modes).
func snapshotDirsToo(t *testing.T, dir string) map[string]string {
	s := snapshot(t, dir, true)
	v := gitView(s)
	for k, x := range s {
		if strings.HasPrefix(x, "D:") {
			v[k] = "D"
		}
	}
	return v
}
