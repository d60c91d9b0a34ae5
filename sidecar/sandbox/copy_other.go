//go:build !unix

package sandbox

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync/atomic"
)

// copier makes no reflinks outside unix.
type copier struct{ cloned atomic.Int64 }

// copyGroup copies entries that share the folder dir through os.Root.
func copyGroup(ws, st *os.Root, dir string, group []entry, _ *copier) error {
	for _, e := range group {
		if err := copyEntry(ws, st, e); err != nil {
			return fmt.Errorf("copy %s: %w", e.path, err)
		}
	}
	return nil
}

func copyEntry(ws, st *os.Root, e entry) error {
	if e.symlink != "" {
		if err := st.Symlink(e.symlink, path.Join("input", e.path)); err != nil {
			return err
		}
		return st.Symlink(e.symlink, path.Join("work", e.path))
	}
	perm := fs.FileMode(0o644)
	if e.exec {
		perm = 0o755
	}
	src, err := ws.Open(e.path)
	if err != nil {
		return err
	}
	defer src.Close()
	for _, d := range []struct {
		name string
		perm fs.FileMode
	}{{path.Join("input", e.path), perm &^ 0o222}, {path.Join("work", e.path), perm}} {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		f, err := st.OpenFile(d.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, d.perm)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, src)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
