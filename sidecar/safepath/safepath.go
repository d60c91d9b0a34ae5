// Package safepath holds the one set of rules every workspace-relative path from a flow, a
// patch, an agent or the canvas must pass before it touches disk (spec §6.3, §6.6, §8).
// It is purely lexical: symlink checks need the filesystem and live with the callers, which
// do all I/O through os.Root.
package safepath

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// DefaultBlocked are the folders refused by default (spec §6.3). A path is refused when any
// of its components names one of them, compared case-insensitively and after the
// normalisations git itself applies against ".git" look-alikes (trailing dots and spaces,
// NTFS short names, HFS+ ignorable code points).
var DefaultBlocked = []string{".agentcanvas", ".git", "node_modules", "dist"}

// Error says why a path was refused. Reason is a short stable phrase.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("unsafe path %q: %s", e.Path, e.Reason) }

// Rules configures Clean. The zero value blocks DefaultBlocked.
type Rules struct {
	// Blocked folder names; nil means DefaultBlocked. ".git" is always blocked.
	Blocked []string
}

func (r Rules) blocked() []string {
	if r.Blocked == nil {
		return DefaultBlocked
	}
	return r.Blocked
}

// Clean checks a workspace-relative, slash-separated path and returns it in canonical form
// (no leading "./", no trailing slash). It refuses empty paths, absolute paths (POSIX, drive
// letters, UNC), backslashes, NUL and other control characters, invalid UTF-8, "." or ".."
// components, doubled slashes, and blocked folders.
func Clean(p string, r Rules) (string, error) {
	bad := func(reason string) (string, error) { return "", &Error{Path: p, Reason: reason} }
	if p == "" {
		return bad("empty path")
	}
	if !utf8.ValidString(p) {
		return bad("not valid UTF-8")
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return bad("contains a control character")
		}
	}
	if strings.ContainsRune(p, '\\') {
		return bad("contains a backslash; use forward slashes")
	}
	if strings.HasPrefix(p, "/") || hasDriveLetter(p) {
		return bad("absolute paths are not allowed; use a path relative to the workspace root")
	}
	q := p
	for strings.HasPrefix(q, "./") {
		q = q[2:]
	}
	q = strings.TrimSuffix(q, "/")
	if q == "" || q == "." {
		return bad("names the workspace root itself")
	}
	for _, comp := range strings.Split(q, "/") {
		switch comp {
		case "":
			return bad("contains an empty path component (//)")
		case ".":
			return bad("contains a '.' component")
		case "..":
			return bad("'..' is not allowed")
		}
		if name, ok := IsBlocked(comp, r); ok {
			return bad(fmt.Sprintf("the internal folder %s/ is not allowed", name))
		}
	}
	if path.Clean(q) != q {
		return bad("not in canonical form")
	}
	return q, nil
}

// IsBlocked reports whether one path component names a blocked folder, and which.
func IsBlocked(comp string, r Rules) (string, bool) {
	n := normalise(comp)
	if n == ".git" || n == "git~1" {
		return ".git", true
	}
	for _, b := range r.blocked() {
		if n == strings.ToLower(b) {
			return b, true
		}
	}
	return "", false
}

// normalise folds a component the way case-insensitive filesystems might: lower case, no
// HFS+ ignorable code points, no trailing dots or spaces (NTFS drops them).
func normalise(comp string) string {
	var b strings.Builder
	for _, c := range comp {
		if hfsIgnorable(c) {
			continue
		}
		b.WriteRune(c)
	}
	return strings.ToLower(strings.TrimRight(b.String(), ". "))
}

func hfsIgnorable(c rune) bool {
	switch {
	case c >= 0x200c && c <= 0x200f, c >= 0x202a && c <= 0x202e, c >= 0x206a && c <= 0x206f, c == 0xfeff:
		return true
	}
	return false
}

func hasDriveLetter(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z'
}
