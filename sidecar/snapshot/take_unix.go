//go:build unix

package snapshot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// Take snapshots dir into the store and returns its tree. Every folder is opened relative to
// its parent without following links, and every file read is opened the same way and checked
// to be the one lstat saw, so a link or a swap planted in dir never makes Take read outside it.
// What a snapshot cannot hold (a special file, a file over the limits) is left out and listed.
// The objects are committed before Take returns.
func (t *Tracker) Take(s *Store, dir string, lim Limits) (Result, error) {
	start := time.Now()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return Result{}, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	w := &walker{s: s, lim: lim.withDefaults(), prev: t.stamps, next: map[string]stamped{}, start: start}
	id, err := w.folder(fd, "", 0)
	if err == nil {
		err = s.Commit()
	}
	if err != nil {
		return Result{}, err
	}
	t.stamps = w.next
	w.res.Tree = id
	w.res.Elapsed = time.Since(start)
	return w.res, nil
}

type walker struct {
	s     *Store
	lim   Limits
	prev  map[string]stamped
	next  map[string]stamped
	start time.Time
	res   Result
}

// folder snapshots the folder open as fd (closed here) at rel.
func (w *walker) folder(fd int, rel string, depth int) (ID, error) {
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return ID{}, fmt.Errorf("%s: %w", orDot(rel), err)
	}
	sort.Strings(names)
	var entries []Entry
	for _, name := range names {
		p := path.Join(rel, name)
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // gone since the folder was read
			}
			return ID{}, &os.PathError{Op: "lstat", Path: p, Err: err}
		}
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if !w.lim.wanted(p, isDir) {
			continue
		}
		e, ok, err := w.entry(fd, name, p, &st, depth)
		if err != nil {
			return ID{}, err
		}
		if ok {
			entries = append(entries, e)
		}
	}
	id, fresh, err := w.s.put(Tree, encodeTree(entries))
	w.stored(fresh, 0)
	return id, err
}

// entry snapshots one name of the folder open as fd.
func (w *walker) entry(fd int, name, p string, st *unix.Stat_t, depth int) (Entry, bool, error) {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if depth >= maxDepth {
			w.res.omit(p, "nested more than %d folders deep", maxDepth)
			return Entry{}, false, nil
		}
		cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return Entry{}, false, &os.PathError{Op: "open", Path: p, Err: err}
		}
		id, err := w.folder(cfd, p, depth+1)
		return Entry{Name: name, Mode: ModeDir, ID: id}, err == nil, err
	case unix.S_IFLNK:
		if !w.counted(p) {
			return Entry{}, false, nil
		}
		target, err := readlinkat(fd, name)
		if err != nil {
			return Entry{}, false, &os.PathError{Op: "readlink", Path: p, Err: err}
		}
		id, fresh, err := w.s.put(Blob, []byte(target))
		w.stored(fresh, int64(len(target)))
		return Entry{Name: name, Mode: ModeSymlink, ID: id}, err == nil, err
	case unix.S_IFREG:
		if !w.counted(p) {
			return Entry{}, false, nil
		}
		mode := ModeFile
		if st.Mode&0o111 != 0 {
			mode = ModeExec
		}
		id, ok, err := w.file(fd, name, p, stampOf(st))
		return Entry{Name: name, Mode: mode, ID: id}, ok, err
	default:
		w.res.omit(p, "not a file, folder or link")
		return Entry{}, false, nil
	}
}

// counted counts a file or link against MaxFiles: false once the folder holds more.
func (w *walker) counted(p string) bool {
	w.res.Files++
	if w.res.Files > w.lim.MaxFiles {
		w.res.omit(p, "over the limit of %d files", w.lim.MaxFiles)
		return false
	}
	return true
}

func (w *walker) stored(fresh bool, size int64) {
	if fresh {
		w.res.Stored++
		w.res.StoredBytes += size
	}
}

// file is a regular file's id: its last one when its stamp is unchanged and was settled,
// else its bytes hashed (and stored when new).
func (w *walker) file(dirfd int, name, p string, st stamp) (ID, bool, error) {
	if old, ok := w.prev[p]; ok && old.trusted && old.st == st {
		w.next[p] = old
		return old.id, true, nil
	}
	if st.size > w.lim.MaxBlob {
		w.res.omit(p, "%d bytes, over the limit of %d", st.size, w.lim.MaxBlob)
		return ID{}, false, nil
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return ID{}, false, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil || stampOf(&now) != st {
		w.res.omit(p, "it changed while it was being kept")
		return ID{}, false, nil
	}
	w.res.Hashed++
	id, ok, err := w.hashAndStore(f, p, st.size)
	if err != nil || !ok {
		return id, ok, err
	}
	w.next[p] = stamped{st: st, id: id, trusted: st.settledBy(w.start)}
	return id, true, nil
}

// hashAndStore hashes a file and stores its bytes when the store lacks them and the Take's
// budget of new bytes allows.
func (w *walker) hashAndStore(f *os.File, p string, size int64) (ID, bool, error) {
	var data []byte
	var id ID
	if size <= MaxInMemory {
		data = make([]byte, size)
		if n, err := io.ReadFull(f, data); err != nil || int64(n) != size {
			w.res.omit(p, "it changed while it was being kept")
			return ID{}, false, nil
		}
		id = Sum(Blob, data)
	} else {
		var err error
		if id, err = hashFile(f, size); err != nil {
			w.res.omit(p, "%v", err)
			return ID{}, false, nil
		}
	}
	if w.s.Has(id) {
		return id, true, nil
	}
	if w.res.StoredBytes+size > w.lim.MaxNewBytes {
		w.res.omit(p, "this turn added over %d bytes of new files", w.lim.MaxNewBytes)
		return ID{}, false, nil
	}
	var fresh bool
	var err error
	if data != nil {
		_, fresh, err = w.s.put(Blob, data)
	} else {
		fresh, err = w.s.putLarge(id, f, size)
		if err != nil && !isStoreError(err) {
			w.res.omit(p, "%v", err)
			return ID{}, false, nil
		}
	}
	w.stored(fresh, size)
	return id, err == nil, err
}

func stampOf(st *unix.Stat_t) stamp {
	return stamp{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), mode: uint32(st.Mode)}
}

func readlinkat(fd int, name string) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		got, err := unix.Readlinkat(fd, name, buf)
		if err != nil {
			return "", err
		}
		if got < n {
			return string(buf[:got]), nil
		}
		if n > 1<<16 {
			return "", unix.ENAMETOOLONG
		}
	}
}

func orDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
