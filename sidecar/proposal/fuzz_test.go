package proposal

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// FuzzApplyPatch: any patch is refused or applied; no panic, and nothing outside the workspace
// is ever written. A refused or failed patch leaves the workspace as it was.
func FuzzApplyPatch(f *testing.F) {
	for _, h := range hazards {
		f.Add([]byte(h.patch))
	}
	f.Add([]byte("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"))
	f.Add([]byte("diff --git a/b.txt b/b.txt\ndeleted file mode 100644\n--- a/b.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-b1\n-b2\n"))
	f.Add([]byte("diff --git a/realdir/in.txt b/moved.txt\nsimilarity index 100%\nrename from realdir/in.txt\nrename to moved.txt\n"))
	f.Fuzz(func(t *testing.T, patch []byte) {
		parent, ws := hazardWorkspace(t)
		outside := snapshot(t, filepath.Join(parent, "outside"), false)
		before := snapshot(t, ws, false)
		res, err := ApplyPatch(context.Background(), ws, patch, Selection{}, ApplyOptions{MaxPatchBytes: 1 << 16})
		if d := diffSnapshots(outside, snapshot(t, filepath.Join(parent, "outside"), false)); d != "" {
			t.Fatalf("wrote outside the workspace:\n%s", d)
		}
		top := snapshot(t, parent, false)
		for k := range top {
			if k != "ws" && k != "outside" && filepath.Dir(k) == "." {
				t.Fatalf("created %s next to the workspace", k)
			}
		}
		after := snapshot(t, ws, false)
		if err != nil {
			if d := diffSnapshots(before, after); d != "" {
				t.Fatalf("refused (%v) but changed the workspace:\n%s", err, d)
			}
			return
		}
		for k := range after {
			if _, ok := before[k]; !ok && (len(k) >= 4 && (k[:4] == ".git" || k[:4] == ".GIT")) {
				t.Fatalf("wrote into %s", k)
			}
		}
		_ = res
	})
}

// FuzzFileDiffRoundTrip: for any old and new content, the section we write parses and applies
// back to exactly the new content.
func FuzzFileDiffRoundTrip(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\nd"), false)
	f.Add([]byte(""), []byte("x"), false)
	f.Add([]byte("x\x00y"), []byte("x\x00z"), true)
	f.Add([]byte("same\r\nline\r\n"), []byte("same\nline\n"), false)
	f.Fuzz(func(t *testing.T, old, new []byte, exec bool) {
		mode := modeFile
		if exec {
			mode = modeExec
		}
		sec, _, _, err := fileDiff("dir/a b.txt", side{exists: true, mode: modeFile, data: old}, side{exists: true, mode: mode, data: new})
		if err != nil {
			t.Fatal(err)
		}
		files, probs := parsePatch(sec, safepath.Rules{}, 0)
		if bytes.Equal(old, new) && !exec {
			return
		}
		if len(probs) > 0 || len(files) != 1 {
			t.Fatalf("our own section is refused: %v\n%s", probs, sec)
		}
		var out bytes.Buffer
		if err := gitdiff.Apply(&out, bytes.NewReader(old), files[0]); err != nil {
			t.Fatalf("apply: %v\n%s", err, sec)
		}
		if !bytes.Equal(out.Bytes(), new) {
			t.Fatalf("round trip differs:\n%q\n%q\n%s", out.Bytes(), new, sec)
		}
	})
}

// FuzzMergeFile: any three texts merge without a panic, and the merge keeps its promises: a
// side that changed nothing yields the other byte for byte; equal sides yield themselves;
// swapping the sides keeps the number of conflicts; taking one side for every chunk gives that
// side back.
func FuzzMergeFile(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), []byte("a\nb\nC\n"))
	f.Add([]byte("a\nb\n"), []byte("a\nx\nb\n"), []byte("a\ny\nb\n"))
	f.Add([]byte("a\r\nb\r\n"), []byte("A\r\nb\r\n"), []byte("a\r\nB"))
	f.Add([]byte(""), []byte("x\n"), []byte("y\n"))
	f.Add([]byte("}\n}\n}\n"), []byte("}\nx\n}\n}\n"), []byte("}\n}\ny\n}\n"))
	l := mergeLabels{Ours: "ours", Theirs: "theirs"}
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		if len(base)+len(ours)+len(theirs) > 1<<14 {
			return
		}
		if got, n := mergeFile(base, base, theirs, l); n != 0 || !bytes.Equal(got, theirs) {
			t.Fatalf("ours unchanged: %d conflicts, %q", n, got)
		}
		if got, n := mergeFile(base, ours, ours, l); n != 0 || !bytes.Equal(got, ours) {
			t.Fatalf("the same edit: %d conflicts, %q", n, got)
		}
		_, n1 := mergeFile(base, ours, theirs, l)
		_, n2 := mergeFile(base, theirs, ours, l)
		if n1 != n2 {
			t.Fatalf("%d conflicts one way, %d the other", n1, n2)
		}
		// Every chunk taken from one side gives that side back: the chunks' ranges tile both
		// files exactly (what the per-hunk resolutions rely on).
		b, o, th := splitLines(base), splitLines(ours), splitLines(theirs)
		chunks := merge3(b, o, th)
		for _, side := range []struct {
			take take
			want []byte
		}{{takeTheirs, theirs}, {takeOurs, ours}} {
			got := renderMerge(b, o, th, chunks, func(int, mergeChunk) resolution { return resolution{take: side.take} }, l)
			if !bytes.Equal(got, side.want) {
				t.Fatalf("every chunk taken as %d: %q, want %q", side.take, got, side.want)
			}
		}
	})
}
