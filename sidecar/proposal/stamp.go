package proposal

// A file's stamp: what lstat says of it (device, inode, size, mode, mtime and ctime). The apply
// checks each file just before it replaces it (txn.unchanged); re-reading every file for that was
// a fifth of an apply's system calls. Any write to a file moves its ctime, so a stamp that has
// not changed means the content has not either, provided the ctime was already old when the
// check looked at the file: a write in the same clock tick as the previous one can leave the ctime
// as it was (file times have a coarse clock, and some file systems keep only seconds). A stamp
// newer than stampMargin before the check, or one that differs, is settled by reading the file,
// as git settles its "racily clean" index entries.

import (
	"time"
)

// stampMargin is more than any file system's timestamp granularity (FAT keeps 2 s).
var stampMargin = 3 * time.Second // a variable for tests

type fileStamp struct {
	ok           bool // false: nothing known (then the file is always read again)
	dev, ino     uint64
	size         int64
	mode         uint32
	mtime, ctime int64 // ns
}

// settled: the stamp can stand for the content, for it was older than the margin when the
// check, at seen, looked.
func (s fileStamp) settled(seen time.Time) bool {
	return s.ok && s.ctime < seen.Add(-stampMargin).UnixNano() && s.mtime < seen.Add(-stampMargin).UnixNano()
}
