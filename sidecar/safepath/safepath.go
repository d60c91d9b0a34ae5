// Package safepath holds the one set of rules every workspace-relative path from a flow, a
// patch, an agent or the canvas must pass before it touches disk (spec §6.3, §6.6, §8).
// It is purely lexical: symlink checks need the filesystem and live with the callers, which
// do all I/O through os.Root.
//
// The rules are the built-in ones (no absolute path, no "..", no blocked folder) plus the
// person's: the folders they allow (agentcanvas.allowedFolders, --allow) and the extra folders
// they block (agentcanvas.blockedFolders, --block). The person's rules only ever narrow.
package safepath

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// DefaultBlocked are the folders refused by default (spec §6.3). A path is refused when any
// of its components names one of them, compared case-insensitively and after the
// normalisations git itself applies against ".git" look-alikes (trailing dots and spaces,
// NTFS short names, HFS+ ignorable code points). No configuration unblocks them.
var DefaultBlocked = []string{".agentcanvas", ".git", "node_modules", "dist"}

// BuildFolders are the built-in blocked names that hold build output and dependencies. They
// keep agents from writing there (a proposal never holds them), but files git tracks in them
// are source, and a sandbox still copies those (OnlyBuildFolder).
var BuildFolders = []string{"node_modules", "dist"}

// The person's rules a refusal came from, for errors.Is on an *Error (the built-in rules
// have none).
var (
	ErrNotAllowed = errors.New("outside the allowed folders")
	ErrBlocked    = errors.New("in a blocked folder")
)

// Error says why a path was refused. Reason is a short stable phrase.
type Error struct {
	Path   string
	Reason string
	rule   error // ErrNotAllowed, ErrBlocked, or nil for a built-in rule
}

func (e *Error) Error() string { return fmt.Sprintf("unsafe path %q: %s", e.Path, e.Reason) }
func (e *Error) Unwrap() error { return e.rule }

// Rules configure Clean. The zero value is the built-in rules alone.
type Rules struct {
	// Allowed are the workspace-relative folders a path must be inside, in canonical form
	// (Config.Rules makes them so). nil allows the whole workspace; a non-nil empty list
	// allows nothing (what a list whose every entry was unusable becomes: a typo must not
	// open the whole workspace).
	Allowed []string
	// Blocked are refused on top of DefaultBlocked: an entry without a slash is a folder
	// name refused at any depth, as the built-in ones are; an entry with one ("src/gen") is
	// that folder from the workspace root. Compared as DefaultBlocked is.
	Blocked []string
	// AllowedFrom and BlockedFrom name where the lists came from ("agentcanvas.allowedFolders",
	// "--allow"); a refusal names them, so the person knows what to change.
	AllowedFrom, BlockedFrom string

	lexical bool // Lexical: no folder rules but .git
}

// Lexical are the rules for paths that are the sidecar's own business rather than an agent's
// (a flow under .agentcanvas/flows, a file of a proposal folder, a path under the home
// folder): the lexical checks, and .git, but no folder lists.
var Lexical = Rules{lexical: true}

// Clean checks a workspace-relative, slash-separated path and returns it in canonical form
// (no leading "./", no trailing slash). It refuses empty paths, absolute paths (POSIX, drive
// letters, UNC), backslashes, NUL and other control characters, invalid UTF-8, "." or ".."
// components, doubled slashes, blocked folders, and paths outside the allowed folders.
func Clean(p string, r Rules) (string, error) {
	q, reason := canonical(p)
	if reason == "" {
		reason, rule := r.check(q)
		if reason == "" {
			return q, nil
		}
		return "", &Error{Path: p, Reason: reason, rule: rule}
	}
	return "", &Error{Path: p, Reason: reason}
}

// canonical applies the lexical rules and returns p in canonical form, or why it is refused.
func canonical(p string) (string, string) {
	if p == "" {
		return "", "empty path"
	}
	if !utf8.ValidString(p) {
		return "", "not valid UTF-8"
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return "", "contains a control character"
		}
	}
	if strings.ContainsRune(p, '\\') {
		return "", "contains a backslash; use forward slashes"
	}
	if strings.HasPrefix(p, "/") || hasDriveLetter(p) {
		return "", "absolute paths are not allowed; use a path relative to the workspace root"
	}
	q := p
	for strings.HasPrefix(q, "./") {
		q = q[2:]
	}
	q = strings.TrimSuffix(q, "/")
	if hasDriveLetter(q) { // "./C:/x" is C:/x to Windows
		return "", "absolute paths are not allowed; use a path relative to the workspace root"
	}
	if q == "" || q == "." {
		return "", "names the workspace root itself"
	}
	for _, comp := range strings.Split(q, "/") {
		switch comp {
		case "":
			return "", "contains an empty path component (//)"
		case ".":
			return "", "contains a '.' component"
		case "..":
			return "", "'..' is not allowed"
		}
	}
	if path.Clean(q) != q {
		return "", "not in canonical form"
	}
	return q, ""
}

// check applies the folder rules to a canonical path: the reason it is refused and the
// person's rule behind it, or "".
func (r Rules) check(q string) (string, error) {
	name, builtin, ok := r.blocks(q)
	switch {
	case ok && builtin:
		return fmt.Sprintf("the internal folder %s/ is not allowed", name), nil
	case ok:
		return fmt.Sprintf("in the blocked folder %s%s", name, from(r.BlockedFrom)), ErrBlocked
	case r.Allowed != nil && !r.allows(q):
		if len(r.Allowed) == 0 {
			why := "the allow-list has no usable entry"
			if r.AllowedFrom != "" {
				why = r.AllowedFrom + " has no usable entry"
			}
			return "no folder is allowed (" + why + ")", ErrNotAllowed
		}
		return fmt.Sprintf("outside the allowed folders [%s]%s", strings.Join(r.Allowed, ", "), from(r.AllowedFrom)), ErrNotAllowed
	}
	return "", nil
}

// from is " (source)", or "" when the source is not known.
func from(source string) string {
	if source == "" {
		return ""
	}
	return " (" + source + ")"
}

// allows: q is one of the allowed folders or inside one. Compared exactly, byte for byte:
// where a filesystem folds case, "SRC/x" is refused with "src" allowed, which errs on the
// safe side (the blocked lists fold instead, which errs on the same side).
func (r Rules) allows(q string) bool {
	for _, a := range r.Allowed {
		if q == a || strings.HasPrefix(q, a+"/") {
			return true
		}
	}
	return false
}

// Blocks reports whether a canonical workspace-relative path is in a blocked folder, and
// which (walkers use it to skip blocked folders silently).
func (r Rules) Blocks(p string) (string, bool) {
	name, _, ok := r.blocks(p)
	return name, ok
}

// OnlyBuildFolder reports whether p is blocked only because a component of it is one of
// BuildFolders: not in .git, .agentcanvas or a folder the person blocked.
func (r Rules) OnlyBuildFolder(p string) bool {
	if r.lexical {
		return false
	}
	build := false
	norm := strings.Split(p, "/")
	for i, c := range norm {
		norm[i] = normalise(c)
		switch {
		case slices.Contains(BuildFolders, norm[i]):
			build = true
		case norm[i] == ".git" || norm[i] == "git~1" || slices.Contains(DefaultBlocked, norm[i]):
			return false
		}
	}
	_, personal := r.personBlocks(norm)
	return build && !personal
}

// blocks is Blocks, also saying whether the folder is a built-in one.
func (r Rules) blocks(p string) (name string, builtin, ok bool) {
	comps := strings.Split(p, "/")
	norm := make([]string, len(comps))
	for i, c := range comps {
		norm[i] = normalise(c)
		if norm[i] == ".git" || norm[i] == "git~1" {
			return ".git", true, true
		}
	}
	if r.lexical {
		return "", false, false
	}
	for _, n := range norm {
		for _, b := range DefaultBlocked {
			if n == b {
				return b, true, true
			}
		}
	}
	name, ok = r.personBlocks(norm)
	return name, false, ok
}

// personBlocks: the normalised components norm are in a folder the person blocked.
func (r Rules) personBlocks(norm []string) (string, bool) {
	for _, b := range r.Blocked {
		bc := strings.Split(b, "/")
		if len(bc) == 1 {
			for _, n := range norm {
				if n == normalise(b) {
					return b, true
				}
			}
			continue
		}
		if len(bc) <= len(norm) && equalFold(bc, norm[:len(bc)]) {
			return b, true
		}
	}
	return "", false
}

// equalFold compares a blocked path's components with a path's normalised ones.
func equalFold(b, norm []string) bool {
	for i := range b {
		if normalise(b[i]) != norm[i] {
			return false
		}
	}
	return true
}

// normalise is Fold: blocked folders are compared as file systems compare names.
func normalise(comp string) string { return Fold(comp) }

// Fold is a path component in the form every file system that ignores something in names
// would see it, so that two names one of them takes for the same fold alike: without the
// code points HFS+ ignores, in NFC (HFS+ and APFS do not tell NFC from NFD), without trailing
// dots and spaces (NTFS drops them), and with letter case folded as any of them folds it —
// Unicode's case folding (APFS: the long s "ſ" is "s", the Kelvin sign "K" is "k") and
// upper-casing (NTFS's table: the dotless "ı" is "I"). It folds more than any one file
// system does, which errs on the safe side for every list it is used with: the blocked
// folders here, and the control files of a proposal.
func Fold(comp string) string {
	var b strings.Builder
	for _, c := range norm.NFC.String(comp) {
		if hfsIgnorable(c) {
			continue
		}
		b.WriteRune(foldRune(c))
	}
	return strings.TrimRight(b.String(), ". ")
}

// foldRune is the lower-case letter of r's case-folding orbit, after upper-casing r (so
// "ı", "I" and "i" fold alike, as do "ſ", "S" and "s").
func foldRune(r rune) rune {
	u := unicode.ToUpper(r)
	low := u
	for f := unicode.SimpleFold(u); f != u; f = unicode.SimpleFold(f) {
		low = min(low, f)
	}
	return unicode.ToLower(low)
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
