//go:build unix

package snapshot

import (
	"errors"
	"maps"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Checkout writes tree into dir, which must not exist yet (its parent must). Every file is a
// new inode written here, never a link to the store or to another folder, so what one copy's
// owner writes never reaches another's. readOnly leaves the folders read-only (0555), as a
// sandbox's input/ is. t, when not nil, learns the stamps of what was written, so its next Take
// hashes only what changes after.
func Checkout(s *Store, tree ID, dir string, readOnly bool, t *Tracker) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	c := &checkout{s: s, readOnly: readOnly, stamps: map[string]stamped{}}
	return c.finish(c.folder(fd, "", EmptyTree, tree), t)
}

// Switch changes dir from tree from (what it holds now, as a Take or a Checkout of t left it)
// to tree to, touching only the paths that differ. A changed file is removed and written anew,
// never written in place.
func Switch(s *Store, dir string, from, to ID, t *Tracker) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	c := &checkout{s: s, stamps: map[string]stamped{}}
	if t != nil {
		c.stamps = maps.Clone(t.stamps)
	}
	return c.finish(c.folder(fd, "", from, to), t)
}

type checkout struct {
	s        *Store
	readOnly bool
	stamps   map[string]stamped
	written  []string // paths whose stamps are new: trusted only if settled at the end
}

func (c *checkout) finish(err error, t *Tracker) error {
	if err != nil || t == nil {
		return err
	}
	end := time.Now()
	for _, p := range c.written {
		st := c.stamps[p]
		st.trusted = st.st.settledBy(end)
		c.stamps[p] = st
	}
	t.stamps = c.stamps
	return nil
}

// folder makes the folder open as fd (closed here), at rel, go from tree from to tree to.
func (c *checkout) folder(fd int, rel string, from, to ID) (err error) {
	defer unix.Close(fd)
	if from == to {
		return nil
	}
	old, err := c.entries(from)
	if err != nil {
		return err
	}
	next, err := c.entries(to)
	if err != nil {
		return err
	}
	for name, o := range old {
		if n, ok := next[name]; !ok || n.IsDir() != o.IsDir() || !n.IsDir() && n != o {
			if err := c.remove(fd, name, path.Join(rel, name), o.IsDir()); err != nil {
				return err
			}
			delete(old, name)
		}
	}
	for name, n := range next {
		p := path.Join(rel, name)
		o, had := old[name]
		switch {
		case had && !n.IsDir():
			continue // the same file
		case n.IsDir():
			if err := c.subfolder(fd, name, p, had, o.ID, n.ID); err != nil {
				return err
			}
		case n.Mode == ModeSymlink:
			if err := c.link(fd, name, p, n.ID); err != nil {
				return err
			}
		default:
			if err := c.file(fd, name, p, n); err != nil {
				return err
			}
		}
	}
	if c.readOnly {
		return unix.Fchmod(fd, 0o555)
	}
	return nil
}

func (c *checkout) entries(tree ID) (map[string]Entry, error) {
	out := map[string]Entry{}
	if tree == EmptyTree {
		return out, nil
	}
	es, err := c.s.ReadTree(tree)
	for _, e := range es {
		out[e.Name] = e
	}
	return out, err
}

func (c *checkout) subfolder(fd int, name, p string, had bool, from, to ID) error {
	if !had {
		from = EmptyTree
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			return &os.PathError{Op: "mkdir", Path: p, Err: err}
		}
	}
	cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	return c.folder(cfd, p, from, to)
}

func (c *checkout) link(fd int, name, p string, id ID) error {
	_, target, err := c.s.Read(id)
	if err != nil {
		return err
	}
	if err := unix.Symlinkat(string(target), fd, name); err != nil {
		return &os.PathError{Op: "symlink", Path: p, Err: err}
	}
	return nil
}

// file writes a new file: created, never opened if it exists, its mode set whatever the umask.
func (c *checkout) file(fd int, name, p string, e Entry) error {
	perm := uint32(0o644)
	if e.Mode == ModeExec {
		perm = 0o755
	}
	nfd, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return &os.PathError{Op: "create", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(nfd), p)
	defer f.Close()
	if _, err := c.s.CopyBlob(e.ID, f); err != nil {
		return err
	}
	if err := unix.Fchmod(nfd, perm); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(nfd, &st); err != nil {
		return err
	}
	c.stamps[p] = stamped{st: stampOf(&st), id: e.ID}
	c.written = append(c.written, p)
	return nil
}

// remove takes name (a folder when dir) out of the folder open as fd, and its stamps.
func (c *checkout) remove(fd int, name, p string, dir bool) error {
	if dir {
		if err := removeAllAt(fd, name); err != nil {
			return &os.PathError{Op: "remove", Path: p, Err: err}
		}
		for k := range c.stamps {
			if strings.HasPrefix(k, p+"/") {
				delete(c.stamps, k)
			}
		}
		return nil
	}
	delete(c.stamps, p)
	if err := unix.Unlinkat(fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: p, Err: err}
	}
	return nil
}

// removeAllAt removes the folder name of the folder open as fd, with what it holds, without
// following a link.
func removeAllAt(fd int, name string) error {
	cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	_ = unix.Fchmod(cfd, 0o755)
	f := os.NewFile(uintptr(cfd), name)
	names, err := f.Readdirnames(-1)
	for _, n := range names {
		if err != nil {
			break
		}
		var st unix.Stat_t
		if err = unix.Fstatat(cfd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			break
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			err = removeAllAt(cfd, n)
		} else {
			err = unix.Unlinkat(cfd, n, 0)
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(fd, name, unix.AT_REMOVEDIR)
}
