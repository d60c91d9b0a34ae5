package proposal

// Versions on disk compared without reading them whole: a file's blob id hashed as it streams
// by, a file compared with bytes in memory a block at a time. A 200 MB file then costs a
// buffer, not another copy of itself, each time an apply, a revert or a recovery asks "is the
// file still this version?".

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strconv"
)

const streamBlock = 1 << 20

// blobHasher is git's blob hash of size bytes still to be written.
func blobHasher(size int64) hash.Hash {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.FormatInt(size, 10) + "\x00"))
	return h
}

// diskBlob is what p is as a version, by blob id: nil when absent; Mode "" for something that
// is no version (a folder, a special file), which matches none.
func diskBlob(root *os.Root, p string) (*LedgerBlob, error) {
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := root.Readlink(p)
		return &LedgerBlob{OID: blobOID([]byte(t)), Mode: "120000"}, err
	case fi.Mode().IsRegular():
		oid, err := hashFile(root, p, fi.Size())
		mode := "100644"
		if fi.Mode().Perm()&0o100 != 0 {
			mode = "100755"
		}
		return &LedgerBlob{OID: oid, Mode: mode}, err
	}
	return &LedgerBlob{}, nil
}

// hashFile is the blob id of the regular file p (of size bytes when lstat looked).
func hashFile(root *os.Root, p string, size int64) (string, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := blobHasher(size)
	if n, err := io.CopyBuffer(h, io.LimitReader(f, size+1), make([]byte, streamBlock)); err != nil {
		return "", err
	} else if n != size {
		return "", fmt.Errorf("%s changed while it was read", p)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sameBlob says whether b is the version want names (nil: absent).
func sameBlob(b, want *LedgerBlob) bool {
	if b == nil || want == nil {
		return b == nil && want == nil
	}
	return b.OID == want.OID && b.Mode == want.Mode
}

// sideFS reads versions of files: the per-folder handles of an apply (dirs), or a root.
type sideFS interface {
	lstat(p string) (fs.FileInfo, error)
	readlink(p string) (string, error)
	open(p string) (io.ReadCloser, error)
}

// rootFS is an os.Root as a sideFS.
type rootFS struct{ r *os.Root }

func (r rootFS) lstat(p string) (fs.FileInfo, error) { return r.r.Lstat(p) }
func (r rootFS) readlink(p string) (string, error)   { return r.r.Readlink(p) }
func (r rootFS) open(p string) (io.ReadCloser, error) {
	return r.r.OpenFile(p, os.O_RDONLY|noFollow, 0)
}

// diskIs says whether p is exactly s (content or symlink target, and the exec bit), read a
// block at a time.
func diskIs(fsys sideFS, p string, s side) (bool, error) {
	fi, err := fsys.lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return !s.exists, nil
	} else if err != nil || !s.exists {
		return false, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := fsys.readlink(p)
		return s.mode == modeSymlink && t == string(s.data), err
	case !fi.Mode().IsRegular() || s.mode == modeSymlink || fi.Size() != int64(len(s.data)):
		return false, nil
	case (fi.Mode().Perm()&0o100 != 0) != (s.mode == modeExec):
		return false, nil
	}
	f, err := fsys.open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return readerIs(f, s.data)
}

// readerIs says whether r holds exactly want.
func readerIs(r io.Reader, want []byte) (bool, error) {
	buf := make([]byte, min(streamBlock, len(want)+1))
	for {
		n, err := io.ReadFull(r, buf)
		if n > len(want) || !bytes.Equal(buf[:n], want[:n]) {
			return false, nil
		}
		want = want[n:]
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return len(want) == 0, nil
		}
		if err != nil {
			return false, err
		}
	}
}
