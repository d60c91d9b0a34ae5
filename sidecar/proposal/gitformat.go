package proposal

// Writing the git patch format exactly as `git diff --binary --full-index` does, so that plain
// `git apply` accepts it: C-style quoted names, mode lines, full index lines, "\ No newline at
// end of file", and "GIT binary patch" literals (zlib + git's base85).

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
)

const zeroOID = "0000000000000000000000000000000000000000"

// Git file modes as they appear in patches.
const (
	modeFile    = 0o100644
	modeExec    = 0o100755
	modeSymlink = 0o120000
	modeGitlink = 0o160000
)

// blobOID is git's object id of a blob with this content.
func blobOID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// quoteName quotes a name as git does with core.quotePath=true: a name containing '"', '\',
// a control character or a byte >= 0x80 is wrapped in double quotes with C escapes.
func quoteName(s string) string {
	return quoteNameWith(s, true)
}

func quoteNameWith(s string, highBytes bool) string {
	need := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c == 0x7f || (highBytes && c >= 0x80) {
			need = true
			break
		}
	}
	if !need {
		return s
	}
	var b bytes.Buffer
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c == 0x7f || (highBytes && c >= 0x80) {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isBinary is git's test: a NUL byte in the first 8000 bytes.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// side is one version of a file in a diff.
type side struct {
	exists bool
	mode   int    // modeFile, modeExec or modeSymlink
	data   []byte // content, or symlink target
}

// fileDiff renders the patch section of one path (exists on at least one side, same kind on
// both sides when both exist). It returns the section and the +/- line counts.
func fileDiff(name string, old, new side) (text []byte, added, deleted int, err error) {
	var b bytes.Buffer
	qa, qb := quoteName("a/"+name), quoteName("b/"+name)
	fmt.Fprintf(&b, "diff --git %s %s\n", qa, qb)
	oldOID, newOID := zeroOID, zeroOID
	if old.exists {
		oldOID = blobOID(old.data)
	}
	if new.exists {
		newOID = blobOID(new.data)
	}
	switch {
	case !old.exists:
		fmt.Fprintf(&b, "new file mode %o\n", new.mode)
	case !new.exists:
		fmt.Fprintf(&b, "deleted file mode %o\n", old.mode)
	case old.mode != new.mode:
		fmt.Fprintf(&b, "old mode %o\nnew mode %o\n", old.mode, new.mode)
	}
	if oldOID == newOID && old.exists && new.exists {
		return b.Bytes(), 0, 0, nil // mode change only
	}
	if old.exists && new.exists && old.mode == new.mode {
		fmt.Fprintf(&b, "index %s..%s %o\n", oldOID, newOID, old.mode)
	} else {
		fmt.Fprintf(&b, "index %s..%s\n", oldOID, newOID)
	}
	if len(old.data) == 0 && len(new.data) == 0 {
		return b.Bytes(), 0, 0, nil // empty file created or deleted
	}
	labelA, labelB := "/dev/null", "/dev/null"
	if old.exists {
		labelA = qa
	}
	if new.exists {
		labelB = qb
	}
	if isBinary(old.data) || isBinary(new.data) {
		b.WriteString("GIT binary patch\n")
		if err := writeLiteral(&b, new.data); err != nil {
			return nil, 0, 0, err
		}
		if err := writeLiteral(&b, old.data); err != nil {
			return nil, 0, 0, err
		}
		return b.Bytes(), 0, 0, nil
	}
	fmt.Fprintf(&b, "--- %s%s\n+++ %s%s\n", labelA, tabIfSpace(labelA), labelB, tabIfSpace(labelB))
	w := windowOf(old.data, new.data, contextLines)
	oldLines, newLines := w.oldLines, w.newLines
	for _, h := range hunks(diffLines(oldLines, newLines)) {
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(w.oldFirst+h.oldStart, h.oldCount), hunkRange(w.newFirst+h.newStart, h.newCount))
		for _, e := range h.edits {
			var line string
			switch e.kind {
			case ' ', '-':
				line = oldLines[e.a]
			case '+':
				line = newLines[e.b]
			}
			switch e.kind {
			case '+':
				added++
			case '-':
				deleted++
			}
			b.WriteByte(e.kind)
			b.WriteString(line)
			if len(line) == 0 || line[len(line)-1] != '\n' {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return b.Bytes(), added, deleted, nil
}

// tabIfSpace: git ends a ---/+++ line with a tab when the name holds a space.
func tabIfSpace(label string) string {
	if bytes.IndexByte([]byte(label), ' ') >= 0 {
		return "\t"
	}
	return ""
}

// hunkRange formats "start,count" as git does: 1-based start, ",1" omitted, and for an empty
// range the line before it.
func hunkRange(start0, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start0) + ",0"
	case 1:
		return strconv.Itoa(start0 + 1)
	}
	return strconv.Itoa(start0+1) + "," + strconv.Itoa(count)
}

const base85Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// writeLiteral writes one "literal N" block: the zlib-deflated data in lines of at most 52
// bytes, each prefixed by its length (A-Z = 1-26, a-z = 27-52), then a blank line.
func writeLiteral(b *bytes.Buffer, data []byte) error {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	fmt.Fprintf(b, "literal %d\n", len(data))
	comp := z.Bytes()
	for len(comp) > 0 {
		n := min(52, len(comp))
		if n <= 26 {
			b.WriteByte(byte('A' + n - 1))
		} else {
			b.WriteByte(byte('a' + n - 27))
		}
		chunk := comp[:n]
		for i := 0; i < n; i += 4 {
			var acc uint32
			for j := 0; j < 4; j++ {
				acc <<= 8
				if i+j < n {
					acc |= uint32(chunk[i+j])
				}
			}
			var enc [5]byte
			for j := 4; j >= 0; j-- {
				enc[j] = base85Alphabet[acc%85]
				acc /= 85
			}
			b.Write(enc[:])
		}
		b.WriteByte('\n')
		comp = comp[n:]
	}
	b.WriteByte('\n')
	return nil
}
