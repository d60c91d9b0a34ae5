package proposal

import (
	"bytes"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// Two agents' changes of one file, as the export sees them: each proposal's edits rebuild
// its own version from the base; the conflict rule is symmetric; edits that do not conflict
// combine, and the combined file is the second proposal's diff applied after the first's.
func FuzzCombineEdits(f *testing.F) {
	f.Add([]byte("1\n2\n3\n4\n5\n6\n7\n8\n"), []byte("one\n2\n3\n4\n5\n6\n7\n8\n"), []byte("1\n2\n3\n4\n5\n6\n7\neight\n"))
	f.Add([]byte("1\n2\n3\n"), []byte("1\nx\n3\n"), []byte("1\n2\ny\n"))
	f.Add([]byte("a\nb"), []byte("a\nb\nc"), []byte("z\na\nb"))
	f.Add([]byte(""), []byte("new\n"), []byte("other\n"))
	f.Fuzz(func(t *testing.T, base, a, b []byte) {
		touchOf := func(v []byte) *touch {
			sec, _, _, err := fileDiff("f.txt", side{exists: true, mode: modeFile, data: base}, side{exists: true, mode: modeFile, data: v})
			if err != nil {
				t.Fatal(err)
			}
			files, probs := parsePatch(sec, safepath.Rules{}, 0)
			if len(probs) > 0 || len(files) != 1 {
				t.Fatalf("our own section is refused: %v\n%s", probs, sec)
			}
			return touches(files)["f.txt"]
		}
		if bytes.Equal(base, a) || bytes.Equal(base, b) {
			return
		}
		ta, tb := touchOf(a), touchOf(b)
		if (conflict(ta, tb) == "") != (conflict(tb, ta) == "") {
			t.Fatalf("the conflict rule is not symmetric: %q vs %q", conflict(ta, tb), conflict(tb, ta))
		}
		if ta.kind != "modify" || tb.kind != "modify" {
			return // binary: always a conflict when shared
		}
		for _, c := range []struct {
			t    *touch
			want []byte
		}{{ta, a}, {tb, b}} {
			got, err := applyEdits(base, c.t.edits)
			if err != nil || !bytes.Equal(got, c.want) {
				t.Fatalf("edits do not rebuild the proposal: %v\n%q\n%q", err, got, c.want)
			}
		}
		if conflict(ta, tb) != "" {
			return
		}
		both, err := applyEdits(base, append(append([]lineEdit(nil), ta.edits...), tb.edits...))
		if err != nil {
			t.Fatalf("edits that do not conflict do not combine: %v", err)
		}
		// b's diff made again against a, applied to a, gives the combination.
		sec, _, _, err := fileDiff("f.txt", side{exists: true, mode: modeFile, data: a}, side{exists: true, mode: modeFile, data: both})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, both) {
			files, probs := parsePatch(sec, safepath.Rules{}, 0)
			if len(probs) > 0 {
				t.Fatalf("rediff refused: %v", probs)
			}
			if got, err := applyEdits(a, touches(files)["f.txt"].edits); err != nil || !bytes.Equal(got, both) {
				t.Fatalf("the second diff does not apply after the first: %v", err)
			}
		}
	})
}
