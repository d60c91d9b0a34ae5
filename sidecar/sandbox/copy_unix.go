//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// copyGroup copies entries that share the folder dir. The three folders are opened through
// os.Root (so they cannot lie outside the workspace); each file is then opened relative to
// its folder's descriptor by a single name with O_NOFOLLOW, which cannot leave that folder.
// Raw descriptors skip the per-file bookkeeping of os.File (poller registration, fcntl),
// which is most of the cost on a tree of many small files.
//
// Every descriptor has exactly one owner: a folder's belongs to its *os.File (closed by the
// deferred Close, which also keeps it alive while its number is used), a file's to the
// function that opened it, which closes it with unix.Close. A raw number is never wrapped in
// an *os.File: that file's finalizer would close the number a second time, by then perhaps
// another goroutine's folder or file.
func copyGroup(ws, st *os.Root, dir string, group []entry, c *copier) error {
	srcF, err := ws.Open(dir)
	if err != nil {
		return err
	}
	defer srcF.Close()
	inF, err := st.Open(path.Join("input", dir))
	if err != nil {
		return err
	}
	defer inF.Close()
	workF, err := st.Open(path.Join("work", dir))
	if err != nil {
		return err
	}
	defer workF.Close()
	src, in, work := int(srcF.Fd()), int(inF.Fd()), int(workF.Fd())
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
		if buf, err = copyFile(c, src, in, work, name, e, buf); err != nil {
			return fmt.Errorf("copy %s: %w", e.path, err)
		}
	}
	return nil
}

// copyFile copies one file into both sides: a reflink when the file system makes them, else
// small files are read once and written twice, big ones copied in the kernel.
func copyFile(c *copier, src, in, work int, name string, e entry, buf []byte) ([]byte, error) {
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
	var data []byte // read on first need, written to both sides
	for _, d := range []struct {
		dir  int
		perm uint32
	}{{in, perm &^ 0o222}, {work, perm}} {
		dfd, err := unix.Openat(d.dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, d.perm)
		if err != nil {
			return buf, err
		}
		switch {
		case c.clone(dfd, fd):
		case st.Size > smallFile:
			err = copyRange(dfd, fd)
		default:
			if data == nil {
				if data, buf, err = readAll(fd, st.Size, buf); err != nil {
					unix.Close(dfd)
					return buf, err
				}
			}
			err = writeAll(dfd, data)
		}
		if cerr := unix.Close(dfd); err == nil {
			err = cerr
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// readAll reads fd from its current offset to its end into buf (grown as needed).
func readAll(fd int, size int64, buf []byte) ([]byte, []byte, error) {
	if int(size)+1 > len(buf) {
		buf = make([]byte, size+1)
	}
	n := 0
	for {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, buf, err
		}
		if m == 0 {
			return buf[:n], buf, nil
		}
		n += m
		if n == len(buf) {
			buf = append(buf, 0)[:len(buf)*2]
		}
	}
}

func writeAll(fd int, data []byte) error {
	for off := 0; off < len(data); {
		m, err := unix.Write(fd, data[off:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		off += m
	}
	return nil
}

// preadCopy copies src from offset off to its end into dst through buf.
func preadCopy(dst, src int, off int64) error {
	buf := make([]byte, 1<<20)
	for {
		n, err := unix.Pread(src, buf, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if err := writeAll(dst, buf[:n]); err != nil {
			return err
		}
		off += int64(n)
	}
}
