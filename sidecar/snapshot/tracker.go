package snapshot

import (
	"fmt"
	"strings"
	"time"
)

// Tracker snapshots one folder again and again: it keeps each file's stamp (device, inode,
// size, mtime, ctime, mode) with the id its bytes had, so the next Take hashes only the files
// whose stamp changed. It is not safe for concurrent use.
type Tracker struct {
	stamps map[string]stamped
}

// stamp is what a file's lstat says about whether it changed.
type stamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
	mode         uint32
}

type stamped struct {
	st      stamp
	id      ID
	trusted bool // the stamp was taken long enough after the file's last change (racy below)
}

// racyMargin: a stamp taken within this time of the file's last change is not trusted, since
// a later write in the same tick of the file system's clock (ext4 and friends advance it once a
// kernel tick, at most 10 ms) would leave the stamp as it was. Git's "racily clean" entries,
// with a margin. A time with no nanoseconds comes from a coarse file system: two seconds then.
const (
	racyMargin       = 50 * time.Millisecond
	coarseRacyMargin = 2 * time.Second
)

func (st stamp) settledBy(t time.Time) bool {
	last := max(st.mtime, st.ctime)
	margin := racyMargin
	if st.mtime%int64(time.Second) == 0 || st.ctime%int64(time.Second) == 0 {
		margin = coarseRacyMargin
	}
	return last+int64(margin) < t.UnixNano()
}

// Limits bound what one Take may cost.
type Limits struct {
	// MaxFiles: files past this many are left out (0: DefaultMaxFiles).
	MaxFiles int
	// MaxBlob: a file over this size is left out (0: DefaultMaxBlob).
	MaxBlob int64
	// MaxNewBytes: once a Take has added this many new bytes to the store, further new
	// files are left out (0: DefaultMaxNewBytes). Files the store already holds still count.
	MaxNewBytes int64
	// Only, when set, lists the slash-separated paths kept (with everything under them);
	// the rest of the folder is not looked at.
	Only []string
}

// The default bounds: a whole repository of a few hundred thousand files passes; a turn that
// writes gigabytes (a build into the sandbox) is kept up to 2 GiB and said to be cut.
const (
	DefaultMaxFiles    = 500_000
	DefaultMaxBlob     = 1 << 30
	DefaultMaxNewBytes = 2 << 30
	maxDepth           = 200
)

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxBlob <= 0 {
		l.MaxBlob = DefaultMaxBlob
	}
	if l.MaxNewBytes <= 0 {
		l.MaxNewBytes = DefaultMaxNewBytes
	}
	return l
}

// wanted reports whether rel (a folder when dir) is kept under Only: a kept path, a path
// under one, or a folder on the way to one.
func (l Limits) wanted(rel string, dir bool) bool {
	if len(l.Only) == 0 {
		return true
	}
	for _, p := range l.Only {
		if rel == p || strings.HasPrefix(rel, p+"/") || dir && strings.HasPrefix(p, rel+"/") {
			return true
		}
	}
	return false
}

// Result is what one Take kept and what it cost.
type Result struct {
	Tree ID `json:"tree"`
	// Files is how many files and links the folder holds; Hashed how many were read because
	// their stamp changed; Stored how many objects (files and folders) were new to the store,
	// StoredBytes their size.
	Files       int   `json:"files"`
	Hashed      int   `json:"hashed"`
	Stored      int   `json:"stored"`
	StoredBytes int64 `json:"storedBytes"`
	// Omitted are the paths left out and why (at most maxOmitted, then a count).
	Omitted []Omission    `json:"omitted,omitempty"`
	Elapsed time.Duration `json:"elapsedNs"`
}

// Omission is a path a snapshot does not hold.
type Omission struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

const maxOmitted = 50

func (r *Result) omit(path, format string, a ...any) {
	switch {
	case len(r.Omitted) < maxOmitted:
		r.Omitted = append(r.Omitted, Omission{Path: path, Reason: fmt.Sprintf(format, a...)})
	case len(r.Omitted) == maxOmitted:
		r.Omitted = append(r.Omitted, Omission{Path: "…", Reason: "and more paths left out"})
	}
}
