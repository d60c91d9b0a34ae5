package proposal

// Where a hunk may match. Hunks match only at their stated lines (no offset, no fuzz), and, as
// git apply requires (match_beginning and match_end in its apply.c), a hunk with no context
// line after its changes must end at the end of the file: it was made at the end of the file.
// Without that rule a hunk that adds lines at the end of a file still matched after it was
// applied (its leading context is still there), and a second apply added the lines again. A
// hunk starting at line 1 matches at the beginning by its stated position already.

import (
	"bytes"
	"fmt"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// anchorProblem says why one of frags (of f) does not sit where git requires in old; "" when
// all do.
func anchorProblem(f *gitdiff.File, frags []*gitdiff.TextFragment, old []byte) string {
	lines := int64(bytes.Count(old, []byte{'\n'}))
	if len(old) > 0 && old[len(old)-1] != '\n' {
		lines++
	}
	for _, fr := range frags {
		if fr.TrailingContext > 0 {
			continue
		}
		end := fr.OldPosition + fr.OldLines - 1 // the last line the hunk reads
		if fr.OldLines == 0 {
			end = fr.OldPosition // an insertion after this line
		}
		if end >= lines {
			continue // at the end, or past it (then the hunk does not apply at all, and says so)
		}
		return fmt.Sprintf("hunk %d ends the file (no context line follows its changes), but the file has %d %s after line %d: it may be applied already",
			fragmentNumber(f, fr), lines-end, plural(int(lines-end), "line", "lines"), end)
	}
	return ""
}

// fragmentNumber is fr's number among f's hunks, from 1, as the review lists them.
func fragmentNumber(f *gitdiff.File, fr *gitdiff.TextFragment) int {
	for i, x := range f.TextFragments {
		if x == fr {
			return i + 1
		}
	}
	return 0
}
