package safepath

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Config is the person's folder lists as given (the editor's settings, command-line flags),
// before they are checked.
type Config struct {
	Allowed, Blocked []string
	// AllowedFrom and BlockedFrom name the setting or flag each list came from; messages and
	// refusals name them.
	AllowedFrom, BlockedFrom string
}

// EntryError is one unusable entry of a Config list.
type EntryError struct {
	From   string // the setting or flag
	Entry  string
	Reason string
}

func (e *EntryError) Error() string { return fmt.Sprintf("%s %q: %s", e.From, e.Entry, e.Reason) }

// Rules checks c and returns the rules it describes, entries in canonical form. Each unusable
// entry (absolute, with "..", an allowed folder inside a blocked one…) is left out and
// reported as an *EntryError; nothing else is lost. An allowed entry "." (the workspace root)
// allows the whole workspace. An allow-list that had entries but no usable one allows nothing,
// and says so. root, when known, lets the error for an absolute entry inside the workspace
// give its relative spelling.
func (c Config) Rules(root string) (Rules, []error) {
	r := Rules{AllowedFrom: c.AllowedFrom, BlockedFrom: c.BlockedFrom}
	var errs []error
	bad := func(from, entry, reason string) {
		errs = append(errs, &EntryError{From: from, Entry: entry, Reason: reason})
	}
	for _, e := range c.Blocked {
		q, reason := canonical(e)
		if reason != "" {
			bad(c.BlockedFrom, e, withRelative(reason, e, root))
			continue
		}
		r.Blocked = append(r.Blocked, q)
	}
	whole := false
	for _, e := range c.Allowed {
		if isRoot(e) {
			whole = true
			continue
		}
		q, reason := canonical(e)
		if reason == "" {
			if name, _, blocked := r.blocks(q); blocked {
				reason = fmt.Sprintf("is in the blocked folder %s, so nothing in it can be allowed", name)
			}
		}
		if reason != "" {
			bad(c.AllowedFrom, e, withRelative(reason, e, root))
			continue
		}
		r.Allowed = append(r.Allowed, q)
	}
	switch {
	case whole:
		r.Allowed = nil
	case len(c.Allowed) > 0 && len(r.Allowed) == 0:
		r.Allowed = []string{}
		errs = append(errs, fmt.Errorf("%s: no entry is usable, so no folder is allowed until it is corrected", c.AllowedFrom))
	}
	return r, errs
}

// isRoot: the entry names the workspace root ("." or "./").
func isRoot(e string) bool {
	if e == "" {
		return false // an empty entry is a mistake, reported as such
	}
	for strings.HasPrefix(e, "./") {
		e = e[2:]
	}
	return e == "." || e == ""
}

// withRelative adds the relative spelling of an absolute entry inside the workspace.
func withRelative(reason, entry, root string) string {
	if root == "" || !filepath.IsAbs(entry) {
		return reason
	}
	rel, err := filepath.Rel(root, entry)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return reason
	}
	return fmt.Sprintf("%s: %q", reason, filepath.ToSlash(rel))
}
