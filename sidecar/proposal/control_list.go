package proposal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// WorkspaceControlFile is the workspace's own additions to the list of control files: one
// .gitignore-style pattern a line, # for comments. It lives under .agentcanvas/, which no
// proposal can change. A workspace can add to the built-in list, never take from it.
const WorkspaceControlFile = ".agentcanvas/control-files"

const maxControlListBytes = 64 << 10

// ControlListError is a workspace list that cannot be used: every apply is refused until it
// is fixed, since a list read wrongly could let a control file through.
type ControlListError struct {
	Line   int // 0: the file as a whole
	Reason string
}

func (e *ControlListError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", WorkspaceControlFile, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", WorkspaceControlFile, e.Line, e.Reason)
}

// readControlList reads the workspace's list through root (no symlink followed out of it).
// A missing file is an empty list.
func readControlList(root *os.Root) ([]controlPattern, error) {
	fi, err := root.Lstat(filepath.FromSlash(WorkspaceControlFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &ControlListError{Reason: err.Error()}
	}
	if !fi.Mode().IsRegular() {
		return nil, &ControlListError{Reason: "not a regular file"}
	}
	if fi.Size() > maxControlListBytes {
		return nil, &ControlListError{Reason: fmt.Sprintf("larger than %d bytes", maxControlListBytes)}
	}
	b, err := root.ReadFile(filepath.FromSlash(WorkspaceControlFile))
	if err != nil {
		return nil, &ControlListError{Reason: err.Error()}
	}
	return ParseControlList(b)
}

// ParseControlList reads a list of control-file patterns, naming the line of the first one
// it cannot use.
func ParseControlList(b []byte) ([]controlPattern, error) {
	var out []controlPattern
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if why := badControlPattern(line); why != "" {
			return nil, &ControlListError{Line: n, Reason: fmt.Sprintf("%q: %s", line, why)}
		}
		out = append(out, controlPattern{source: line, reason: workspaceReason, pattern: parseControlPattern(line)})
	}
	if err := sc.Err(); err != nil {
		return nil, &ControlListError{Reason: err.Error()}
	}
	return out, nil
}

// badControlPattern says why a pattern cannot be used, or "".
func badControlPattern(p string) string {
	switch {
	case !utf8.ValidString(p):
		return "not valid UTF-8"
	case strings.HasPrefix(p, "!"):
		return "a workspace can add to the list of control files, not take from it ('!' patterns)"
	case strings.ContainsRune(p, '\\'):
		return "backslashes are not allowed; use forward slashes"
	case strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return "holds a control character"
	}
	for _, c := range strings.Split(strings.Trim(p, "/"), "/") {
		switch c {
		case "..", ".":
			return "'.' and '..' components are not allowed"
		case "":
			return "holds an empty component (//)"
		}
		if _, err := filepath.Match(c, ""); err != nil {
			return "not a valid pattern: " + err.Error()
		}
	}
	return ""
}
