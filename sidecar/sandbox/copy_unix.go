//go:build unix

package sandbox

import (
	"fmt"
	"io"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// copyGroup copies entries that share the folder dir. The three folders are opened through
// os.Root (so they cannot lie outside the workspace); each file is then opened relative to
// its folder's descriptor by a single name with O_NOFOLLOW, which cannot leave that folder.
// Raw descriptors skip the per-file bookkeeping of os.File (poller registration, fcntl),
// which is most of the cost on a tree of many small files.
func copyGroup(ws, st *os.Root, dir string, group []entry) error {
	open := func(r *os.Root, d string) (*os.File, int, error) {
		f, err := r.Open(d)
		if err != nil {
			return nil, -1, err
		}
		return f, int(f.Fd()), nil
	}
	srcF, src, err := open(ws, dir)
	if err != nil {
		return err
	}
	defer srcF.Close()
	inF, in, err := open(st, path.Join("input", dir))
	if err != nil {
		return err
	}
	defer inF.Close()
	workF, work, err := open(st, path.Join("work", dir))
	if err != nil {
		return err
	}
	defer workF.Close()
	buf := make([]byte, 64*1024)
	for _, e := range group {
		name := path.Base(e.path)
		if e.symlink != "" {
			if err := unix.Symlinkat(e.symlink, in, name); err != nil {
				return fmt.Errorf("copy %s: %w", e.path, err)
			}
			if err := unix.Symlinkat(e.symlink, work, name); err != nil {
				return fmt.Errorf("copy %s: %w", e.path, err)
			}
			continue
		}
		if buf, err = copyFile(src, in, work, name, e, buf); err != nil {
			return fmt.Errorf("copy %s: %w", e.path, err)
		}
	}
	return nil
}

func copyFile(src, in, work int, name string, e entry, buf []byte) ([]byte, error) {
	fd, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return buf, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return buf, refuse(e.path, "changed while being copied")
	}
	perm := uint32(0o644)
	if e.exec {
		perm = 0o755
	}
	if st.Size > smallFile {
		// Big files stream through os.File, whose io.Copy uses copy_file_range on Linux.
		sf := os.NewFile(uintptr(fd), name)
		for _, d := range []struct {
			dir  int
			perm uint32
		}{{in, perm &^ 0o222}, {work, perm}} {
			if _, err := sf.Seek(0, io.SeekStart); err != nil {
				return buf, err
			}
			dfd, err := unix.Openat(d.dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, d.perm)
			if err != nil {
				return buf, err
			}
			df := os.NewFile(uintptr(dfd), name)
			_, err = io.Copy(df, sf)
			if cerr := df.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return buf, err
			}
		}
		return buf, nil
	}
	if int(st.Size)+1 > len(buf) {
		buf = make([]byte, st.Size+1)
	}
	n := 0
	for {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, err
		}
		if m == 0 {
			break
		}
		n += m
		if n == len(buf) {
			buf = append(buf, 0)[:len(buf)*2]
		}
	}
	data := buf[:n]
	for _, d := range []struct {
		dir  int
		perm uint32
	}{{in, perm &^ 0o222}, {work, perm}} {
		dfd, err := unix.Openat(d.dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, d.perm)
		if err != nil {
			return buf, err
		}
		for off := 0; off < len(data); {
			m, err := unix.Write(dfd, data[off:])
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				unix.Close(dfd)
				return buf, err
			}
			off += m
		}
		if err := unix.Close(dfd); err != nil {
			return buf, err
		}
	}
	return buf, nil
}
