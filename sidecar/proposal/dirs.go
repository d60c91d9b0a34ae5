package proposal

import (
	"os"
	"path"
	"strings"
)

// dirs caches one os.Root per folder of the workspace, so that operations on a file are one
// system call on its folder's descriptor instead of a walk from the workspace root each time.
// Everything still goes through os.Root: a cached folder can never lie outside the workspace.
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

// split returns the folder of p and p's last name.
func (d *dirs) split(p string) (*os.Root, string, error) {
	r, err := d.get(path.Dir(p))
	return r, path.Base(p), err
}

func (d *dirs) lstat(p string) (os.FileInfo, error) {
	r, n, err := d.split(p)
	if err != nil {
		return nil, err
	}
	return r.Lstat(n)
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

// forget drops dir and every folder under it (after dir was removed).
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
