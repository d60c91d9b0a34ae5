//go:build !unix

package proposal

import (
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// dirs caches one os.Root per folder of the workspace, so that an operation on a file is one
// call on its folder instead of a walk from the workspace root each time.
type dirs struct {
	root *os.Root
	m    map[string]*os.Root
}

func newDirs(root *os.Root) *dirs { return &dirs{root: root, m: map[string]*os.Root{}} }

func (d *dirs) get(dir string) (*os.Root, error) {
	if dir == "." || dir == "" {
		return d.root, nil
	}
	if r, ok := d.m[dir]; ok {
		return r, nil
	}
	r, err := d.root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	d.m[dir] = r
	return r, nil
}

// has reports whether dir is cached, that is known to be a folder (no shortcut here: os.Root
// follows symlinks inside the workspace, so the callers check each folder themselves).
func (d *dirs) has(dir string) bool { return false }

func (d *dirs) split(p string) (*os.Root, string, error) {
	r, err := d.get(path.Dir(p))
	return r, path.Base(p), err
}

func (d *dirs) lstat(p string) (fs.FileInfo, error) {
	r, n, err := d.split(p)
	if err != nil {
		return nil, err
	}
	return r.Lstat(n)
}

// open opens the regular file p for reading.
func (d *dirs) open(p string) (io.ReadCloser, error) {
	r, n, err := d.split(p)
	if err != nil {
		return nil, err
	}
	return r.Open(n)
}

func (d *dirs) readFile(p string) ([]byte, error) {
	r, n, err := d.split(p)
	if err != nil {
		return nil, err
	}
	return r.ReadFile(n)
}

func (d *dirs) readlink(p string) (string, error) {
	r, n, err := d.split(p)
	if err != nil {
		return "", err
	}
	return r.Readlink(n)
}

func (d *dirs) remove(p string) error {
	r, n, err := d.split(p)
	if err != nil {
		return err
	}
	return r.Remove(n)
}

// removeMany removes every path, ignoring errors.
func (d *dirs) removeMany(paths []string) {
	for _, p := range paths {
		d.remove(p)
	}
}

func (d *dirs) rmdir(p string) error {
	if err := d.remove(p); err != nil {
		return err
	}
	d.forget(p)
	return nil
}

func (d *dirs) mkdir(p string, perm fs.FileMode) error {
	r, n, err := d.split(p)
	if err != nil {
		return err
	}
	return r.Mkdir(n, perm)
}

func (d *dirs) symlink(target, p string) error {
	r, n, err := d.split(p)
	if err != nil {
		return err
	}
	return r.Symlink(target, n)
}

func (d *dirs) create(p string, perm fs.FileMode) (writeFile, error) {
	r, n, err := d.split(p)
	if err != nil {
		return nil, err
	}
	return r.OpenFile(n, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// chmod sets the permission bits of the file p.
func (d *dirs) chmod(p string, perm fs.FileMode) error {
	r, n, err := d.split(p)
	if err != nil {
		return err
	}
	return r.Chmod(n, perm)
}

// rename moves from to p within one folder.
func (d *dirs) rename(from, p string) error {
	r, n, err := d.split(p)
	if err != nil {
		return err
	}
	return r.Rename(path.Base(from), n)
}

func (d *dirs) forget(dir string) {
	for k, r := range d.m {
		if k == dir || strings.HasPrefix(k, dir+"/") {
			r.Close()
			delete(d.m, k)
		}
	}
}

func (d *dirs) close() {
	for _, r := range d.m {
		r.Close()
	}
	d.m = map[string]*os.Root{}
}
