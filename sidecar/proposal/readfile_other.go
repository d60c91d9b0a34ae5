//go:build !unix

package proposal

import (
	"os"
	"path"
)

// dirFiles reads files of one folder of a tree through os.Root.
type dirFiles struct {
	root *os.Root
}

func openDirFiles(root *os.Root, dir string) (*dirFiles, error) {
	r, err := root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &dirFiles{root: r}, nil
}

func (d *dirFiles) Close() error { return d.root.Close() }

func (d *dirFiles) ReadFile(rel string, sizeHint int64) ([]byte, error) {
	return d.root.ReadFile(path.Base(rel))
}

func (d *dirFiles) Readlink(rel string) (string, error) { return d.root.Readlink(path.Base(rel)) }
