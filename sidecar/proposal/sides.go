package proposal

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
)

// readSideAt reads one path as a version of a file (content or symlink target, and mode) through
// the per-folder handles: no step crosses a symlink. A missing path is side{} (exists false); a
// folder or a special file is an error.
func readSideAt(d *dirs, p string) (side, error) {
	fi, err := d.lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return side{}, nil
	}
	if err != nil {
		return side{}, err
	}
	switch kindOfMode(fi.Mode()) {
	case kindSymlink:
		t, err := d.readlink(p)
		return side{exists: true, mode: modeSymlink, data: []byte(t)}, err
	case kindFile:
		if fi.Size() > maxVersionBytes {
			return side{}, fmt.Errorf("%s is larger than %d bytes", p, maxVersionBytes)
		}
		b, err := d.readFile(p)
		m := modeFile
		if fi.Mode()&0o100 != 0 {
			m = modeExec
		}
		return side{exists: true, mode: m, data: b}, err
	case kindDir:
		return side{}, fmt.Errorf("%s is a folder", p)
	}
	return side{}, fmt.Errorf("%s is not a regular file or symlink", p)
}

func (s side) equal(o side) bool {
	return s.exists == o.exists && (!s.exists || s.mode == o.mode && bytes.Equal(s.data, o.data))
}

// text: a regular file git would diff line by line (not a symlink, no NUL in its first 8000
// bytes). A missing file counts as empty text.
func (s side) text() bool { return s.mode != modeSymlink && !isBinary(s.data) }

// oid is the blob id of the version ("" when it does not exist), as reviews name the
// workspace file a merge was made against.
func (s side) oid() string {
	if !s.exists {
		return ""
	}
	return blobOID(s.data)
}

// changeSections renders the patch sections that turn old into new at name: one section, or a
// deletion then a creation when the path changes between file and symlink, as git writes it.
func changeSections(name string, old, new side) (sections [][]byte, added, deleted int, err error) {
	emit := func(o, n side) error {
		s, a, d, err := fileDiff(name, o, n)
		if err != nil {
			return err
		}
		sections = append(sections, s)
		added += a
		deleted += d
		return nil
	}
	if old.exists && new.exists && (old.mode == modeSymlink) != (new.mode == modeSymlink) {
		if err := emit(old, side{}); err != nil {
			return nil, 0, 0, err
		}
		err = emit(side{}, new)
		return sections, added, deleted, err
	}
	err = emit(old, new)
	return sections, added, deleted, err
}
