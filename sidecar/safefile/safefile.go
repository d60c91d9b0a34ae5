// Package safefile is how the sidecar reads and writes files in a folder an agent can write
// (its CLI home, its sandbox, the files a session loop or a test leaves there): the agent may
// have put anything at any name meanwhile, so nothing here follows it out of the folder.
//
//   - Every name is opened inside the folder (os.Root): a link that leads out of it is refused.
//   - Files are opened O_NONBLOCK and must be regular files: a FIFO, socket or device is
//     refused instead of hanging or touching a device.
//   - Reads are capped: the size is checked before reading (a sparse file of a terabyte is
//     refused, not read), and the read stops at the cap if the file grows.
//   - Writes go to a temporary file beside the target, which is then renamed (or linked, for
//     WriteNew) over the name: a link the agent left there is replaced, never written through,
//     and a reader never sees half a file.
//
// safepath checks names lexically; this package is the filesystem half.
package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Errors a caller may tell apart (errors.Is).
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("larger than the sidecar reads")
)

// Dir is a folder an agent can write, opened by the sidecar.
type Dir struct{ root *os.Root }

// Open opens the folder at path. The path itself is the sidecar's (links in it are followed:
// a person's ~/.claude may be one); only what is inside the folder may be an agent's.
func Open(path string) (*Dir, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r}, nil
}

// Close closes the folder.
func (d *Dir) Close() error { return d.root.Close() }

// Path is the folder's path, as opened.
func (d *Dir) Path() string { return d.root.Name() }

// OpenFile opens the regular file at rel (slash or OS separated, inside the folder) for
// reading, without blocking on a FIFO and without following a link out of the folder.
func (d *Dir) OpenFile(rel string) (*os.File, fs.FileInfo, error) {
	if st, err := d.root.Lstat(rel); err == nil && !st.Mode().IsRegular() {
		// Checked before opening too: opening some devices does something.
		return nil, nil, &fs.PathError{Op: "open", Path: d.name(rel), Err: ErrNotRegular}
	}
	f, err := d.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: d.name(rel), Err: ErrNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// ReadFile reads the regular file at rel, refusing one larger than max bytes.
func (d *Dir) ReadFile(rel string, max int64) ([]byte, error) {
	f, st, err := d.OpenFile(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: d.name(rel), Err: fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, st.Size(), max)}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = &fs.PathError{Op: "read", Path: d.name(rel), Err: fmt.Errorf("%w: grew past %d bytes while read", ErrTooLarge, max)}
	}
	return b, err
}

// WriteFile replaces rel with b: written to a temporary file beside it, then renamed over
// it. Whatever was at rel (a link to a file elsewhere among them) is replaced, not written
// through; a folder there is not replaced.
func (d *Dir) WriteFile(rel string, b []byte, perm fs.FileMode) error {
	tmp, err := d.writeTemp(rel, b, perm)
	if err != nil {
		return err
	}
	if err := d.root.Rename(tmp, rel); err != nil {
		_ = d.root.Remove(tmp)
		return err
	}
	return nil
}

// WriteNew creates rel with b when nothing is at rel (fs.ErrExist otherwise, for a link
// too): a file seeded once, complete or not at all.
func (d *Dir) WriteNew(rel string, b []byte, perm fs.FileMode) error {
	tmp, err := d.writeTemp(rel, b, perm)
	if err != nil {
		return err
	}
	err = d.root.Link(tmp, rel) // a hard link never replaces a name
	_ = d.root.Remove(tmp)
	return err
}

// writeTemp writes b to a new temporary file in rel's folder and returns its name.
func (d *Dir) writeTemp(rel string, b []byte, perm fs.FileMode) (string, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".agentcanvas-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = d.root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// MkdirAll makes the folder rel and its parents inside the folder.
func (d *Dir) MkdirAll(rel string, perm fs.FileMode) error { return d.root.MkdirAll(rel, perm) }

// Lstat describes rel without following a link.
func (d *Dir) Lstat(rel string) (fs.FileInfo, error) { return d.root.Lstat(rel) }

// Remove removes the name rel (a link itself, not what it leads to).
func (d *Dir) Remove(rel string) error { return d.root.Remove(rel) }

// Rename renames rel to to, both inside the folder: a link on the way out of it is refused.
func (d *Dir) Rename(rel, to string) error { return d.root.Rename(rel, to) }

// ReadDir lists the folder rel, which must be a folder itself (not a link to one, nor a FIFO
// that opening would wait on).
func (d *Dir) ReadDir(rel string) ([]fs.DirEntry, error) {
	if st, err := d.root.Lstat(rel); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: d.name(rel), Err: syscall.ENOTDIR}
	}
	f, err := d.root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Walk calls fn with each regular file at or beneath rel (slash-separated names relative to
// the folder), in lexical order; links and other kinds of file are skipped, and links to
// folders are not followed. A missing rel is no error.
func (d *Dir) Walk(rel string, fn func(name string) error) error {
	err := fs.WalkDir(d.root.FS(), filepath.ToSlash(rel), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.Type().IsRegular() {
			return fn(p)
		}
		return nil
	})
	return err
}

func (d *Dir) name(rel string) string { return filepath.Join(d.root.Name(), rel) }

// ReadFile reads the regular file at path (see Dir.ReadFile), opened inside its folder.
func ReadFile(path string, max int64) ([]byte, error) {
	d, err := Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(filepath.Base(path), max)
}
