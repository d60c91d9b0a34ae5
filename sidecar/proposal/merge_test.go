package proposal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mergeCorpus makes a base file and two edits of it. Every line of a file is distinct, and a
// line new to a side is never a base line, so each diff has one longest common subsequence:
// git's xdiff and our Myers then see the same changes, and any difference in the merged
// output is the merge's own. (Where lines repeat, two correct diffs may align a change at
// different copies of a line, and the merges legitimately differ; mergeProperties covers that.)
// Both sides sometimes make the same change (the same new line at the same place, the same
// deletion), and some lines hold no letter or digit ("}}", blank-ish), to exercise the
// refinement and the joining of conflicts.
func mergeCorpus(r *rand.Rand) (base, ours, theirs []byte) {
	n := r.IntN(40)
	if r.IntN(6) == 0 {
		n = 60 + r.IntN(80)
	}
	var b []string
	for i := 0; i < n; i++ {
		switch r.IntN(6) {
		case 0:
			b = append(b, strings.Repeat("}", i+1)) // no letter or digit, still unique
		case 1:
			b = append(b, strings.Repeat(" ", i+1)+";")
		default:
			b = append(b, fmt.Sprintf("line %d of the base", i))
		}
	}
	shared := r.IntN(3) == 0               // this case leans on identical changes
	density := []int{40, 12, 4}[r.IntN(3)] // one change in about this many lines
	edit := func(side string) []string {
		var out []string
		fresh := func(at, k int) string {
			if shared && r.IntN(2) == 0 || r.IntN(8) == 0 {
				return fmt.Sprintf("both at %d #%d", at, k) // the other side may write it too, at the same place
			}
			return fmt.Sprintf("%s at %d #%d", side, at, k)
		}
		insert := func(at int) {
			if r.IntN(density) == 0 {
				for k := 0; k < 1+r.IntN(3); k++ {
					out = append(out, fresh(at, k))
				}
			}
		}
		for i, l := range b {
			insert(i)
			switch p := r.IntN(2 * density); {
			case p == 0:
				// deleted
			case p == 1:
				out = append(out, fresh(i, 9))
			default:
				out = append(out, l)
			}
		}
		insert(len(b))
		return out
	}
	join := func(lines []string, nl bool, crlf bool) []byte {
		eol := "\n"
		if crlf {
			eol = "\r\n"
		}
		s := strings.Join(lines, eol)
		if len(lines) > 0 && nl {
			s += eol
		}
		return []byte(s)
	}
	o, t := edit("ours"), edit("theirs")
	if r.IntN(10) == 0 {
		t = o // the same edit on both sides
	}
	crlf := r.IntN(8) == 0
	crlfOf := func() bool { // now and then one side alone switches its line ends
		if r.IntN(12) == 0 {
			return !crlf
		}
		return crlf
	}
	nlOf := func() bool { return r.IntN(6) != 0 }
	return join(b, nlOf(), crlf), join(o, nlOf(), crlfOf()), join(t, nlOf(), crlfOf())
}

// gitMergeFile runs the oracle: `git merge-file -p` and its conflict count (the exit status).
func gitMergeFile(t testing.TB, dir string, base, ours, theirs []byte) ([]byte, int) {
	t.Helper()
	for name, data := range map[string][]byte{"base": base, "ours": ours, "theirs": theirs} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), 0
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 127:
		return stdout.Bytes(), ee.ExitCode()
	}
	t.Fatalf("git merge-file: %v\n%s", err, stderr.Bytes())
	return nil, 0
}

// The merge equals git merge-file's, byte for byte and conflict for conflict, on random edits.
func TestMergeFileMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	n := 400
	if testing.Short() {
		n = 100
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(18, 2026))
	clean, conflicted := 0, 0
	for i := 0; i < n; i++ {
		base, ours, theirs := mergeCorpus(r)
		want, wantN := gitMergeFile(t, dir, base, ours, theirs)
		got, gotN := mergeFile(base, ours, theirs, mergeLabels{Ours: "ours", Theirs: "theirs"})
		if !bytes.Equal(got, want) || gotN != wantN {
			t.Fatalf("case %d: %d conflict(s), git %d\nbase:\n%q\nours:\n%q\ntheirs:\n%q\ngot:\n%s\nwant:\n%s", i, gotN, wantN, base, ours, theirs, got, want)
		}
		if wantN == 0 {
			clean++
		} else {
			conflicted++
		}
	}
	// The corpus must exercise both outcomes, or the test proves little.
	if clean < n/10 || conflicted < n/10 {
		t.Fatalf("the corpus is lopsided: %d clean, %d with conflicts", clean, conflicted)
	}
	t.Logf("%d merges equal to git merge-file's: %d clean, %d with conflicts", n, clean, conflicted)
}

// Cases worth naming, each checked against git too.
func TestMergeFileCases(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name               string
		base, ours, theirs string
		conflicts          int
	}{
		{"different lines", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", 0},
		{"the same line", "a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n", 1},
		{"adjacent lines", "a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n", 1},
		{"one line apart", "a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nC\nd\n", 0},
		{"the same change", "a\nb\nc\n", "a\nX\nc\n", "a\nX\nc\n", 0},
		{"insertions at one place", "a\nb\n", "a\nx\nb\n", "a\ny\nb\n", 1},
		{"one side deletes all", "a\nb\n", "", "a\nB\n", 1},
		{"no final newline", "a\nb", "a\nB", "a\nC", 1},
		{"CRLF markers", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", "a\r\nC\r\nc\r\n", 1},
		{"joined across a brace", "a\nb\n}\nc\nd\n", "a\nB\n}\nC\nd\n", "a\nb2\n}\nc2\nd\n", 1},
		{"empty base (both added)", "", "x\ny\n", "x\nz\n", 1},
	} {
		want, wantN := gitMergeFile(t, dir, []byte(c.base), []byte(c.ours), []byte(c.theirs))
		got, gotN := mergeFile([]byte(c.base), []byte(c.ours), []byte(c.theirs), mergeLabels{Ours: "ours", Theirs: "theirs"})
		if !bytes.Equal(got, want) || gotN != wantN || gotN != c.conflicts {
			t.Errorf("%s: %d conflict(s) (git %d, want %d)\ngot:\n%s\ngit:\n%s", c.name, gotN, wantN, c.conflicts, got, want)
		}
	}
}

// Where lines repeat the alignment of a change is a choice, so the result is checked by what
// any merge must do: a side that changed nothing yields the other; equal sides yield
// themselves; swapping the sides swaps the conflicts, never their number; and a clean merge
// keeps every change of both sides (re-merging it with either side changes nothing).
func TestMergeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 18))
	for i := 0; i < 800; i++ {
		base := []byte(randText(r))
		ours, theirs := []byte(editLines(r, string(base))), []byte(editLines(r, string(base)))
		l := mergeLabels{Ours: "ours", Theirs: "theirs"}
		if got, n := mergeFile(base, base, theirs, l); n != 0 || !bytes.Equal(got, theirs) {
			t.Fatalf("case %d: ours unchanged: %d conflicts\n%q\nwant %q", i, n, got, theirs)
		}
		if got, n := mergeFile(base, ours, base, l); n != 0 || !bytes.Equal(got, ours) {
			t.Fatalf("case %d: theirs unchanged: %d conflicts\n%q\nwant %q", i, n, got, ours)
		}
		if got, n := mergeFile(base, ours, ours, l); n != 0 || !bytes.Equal(got, ours) {
			t.Fatalf("case %d: same edit: %d conflicts\n%q\nwant %q", i, n, got, ours)
		}
		ab, n1 := mergeFile(base, ours, theirs, l)
		_, n2 := mergeFile(base, theirs, ours, l)
		if n1 != n2 {
			t.Fatalf("case %d: %d conflicts one way, %d the other", i, n1, n2)
		}
		if n1 == 0 {
			if again, n := mergeFile(ours, ab, ours, l); n != 0 || !bytes.Equal(again, ab) {
				t.Fatalf("case %d: the merge lost ours' changes", i)
			}
		}
	}
}

// mergeBenchFiles is a 10,000-line file and two edits of it, each changing one line in a
// hundred (different lines, so the merge is clean), as re-basing a large file does.
func mergeBenchFiles() (base, ours, theirs []byte) {
	var b, o, t strings.Builder
	for i := 0; i < 10000; i++ {
		line := fmt.Sprintf("line %d of a large file, with some text to compare\n", i)
		b.WriteString(line)
		switch {
		case i%100 == 10:
			o.WriteString("ours " + line)
			t.WriteString(line)
		case i%100 == 60:
			o.WriteString(line)
			t.WriteString("theirs " + line)
		default:
			o.WriteString(line)
			t.WriteString(line)
		}
	}
	return []byte(b.String()), []byte(o.String()), []byte(t.String())
}

// BenchmarkMergeFile merges the files in process; BenchmarkGitMergeFile runs git merge-file
// -p on the same files (the process start included), the baseline.
func BenchmarkMergeFile(b *testing.B) {
	base, ours, theirs := mergeBenchFiles()
	b.SetBytes(int64(len(base)))
	for b.Loop() {
		if _, n := mergeFile(base, ours, theirs, mergeLabels{Ours: "ours", Theirs: "theirs"}); n != 0 {
			b.Fatal("conflicts")
		}
	}
}

func BenchmarkGitMergeFile(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	base, ours, theirs := mergeBenchFiles()
	dir := b.TempDir()
	b.SetBytes(int64(len(base)))
	for b.Loop() {
		if _, n := gitMergeFile(b, dir, base, ours, theirs); n != 0 {
			b.Fatal("conflicts")
		}
	}
}
