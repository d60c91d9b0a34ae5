package proposal

import (
	"bytes"
	"testing"
)

// Two agents' changes of one text file, as create and export see them: the collision rule
// (clash.go) is symmetric; each proposal's line edits rebuild its own version; changes that do
// not collide combine, in either order, into exactly what the three-way merge (held to `git
// merge-file`) makes of them, without a conflict.
func FuzzCombineEdits(f *testing.F) {
	f.Add([]byte("1\n2\n3\n4\n5\n6\n7\n8\n"), []byte("one\n2\n3\n4\n5\n6\n7\n8\n"), []byte("1\n2\n3\n4\n5\n6\n7\neight\n"))
	f.Add([]byte("1\n2\n3\n"), []byte("1\nx\n3\n"), []byte("1\n2\ny\n"))
	f.Add([]byte("a\nb"), []byte("a\nb\nc"), []byte("z\na\nb"))
	f.Add([]byte(""), []byte("new\n"), []byte("other\n"))
	f.Add([]byte("1\n2\n3\n4\n5\n"), []byte("1\nX\n3\n4\n5\n"), []byte("1\nX\n3\n4\nY\n"))                          // the same change, and one apart
	f.Add([]byte("x\nx\nm\nn\n"), []byte("x\nm\nn\n"), []byte("x\nm\nN\n"))                                         // the same line deleted, seen at two places
	f.Add([]byte("1\r\n2\r\n3\r\n4\r\n"), []byte("1\r\n2\r\n3\r\n4\r\n5\r\n"), []byte("0\r\n1\r\n2\r\n3\r\n4\r\n")) // CRLF, both ends
	f.Fuzz(func(t *testing.T, base, a, b []byte) {
		if bytes.Equal(base, a) || bytes.Equal(base, b) || isBinary(base) || isBinary(a) || isBinary(b) {
			return
		}
		sb, sa, sbb := side{exists: true, mode: modeFile, data: base}, side{exists: true, mode: modeFile, data: a}, side{exists: true, mode: modeFile, data: b}
		ab, ba := fileClashes("f.txt", sb, sa, sb, sbb), fileClashes("f.txt", sb, sbb, sb, sa)
		if (len(ab) == 0) != (len(ba) == 0) {
			t.Fatalf("the collision rule is not symmetric: %+v vs %+v", ab, ba)
		}
		for _, v := range []side{sa, sbb} {
			if got, err := applyEdits(base, textEdits(splitLines(base), splitLines(v.data))); err != nil || !bytes.Equal(got, v.data) {
				t.Fatalf("the edits do not rebuild the proposal's version: %v\n%q\n%q", err, got, v.data)
			}
		}
		if len(ab) > 0 {
			return
		}
		both, err := combineSides(sb, []side{sa, sbb})
		if err != nil {
			t.Fatalf("changes that do not collide do not combine: %v", err)
		}
		if other, err := combineSides(sb, []side{sbb, sa}); err != nil || !other.equal(both) {
			t.Fatalf("the combination depends on the order: %v\n%q\n%q", err, both.data, other.data)
		}
		merged, conflicts := mergeFile(base, a, b, mergeLabels{Ours: "a", Theirs: "b"})
		if conflicts != 0 || !bytes.Equal(merged, both.data) {
			t.Fatalf("the three-way merge disagrees (%d conflicts):\n%q\ncombined:\n%q", conflicts, merged, both.data)
		}
	})
}
