//go:build unix

package proposal

import (
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// dirFiles reads files of one folder of a tree opened through os.Root. Each file is opened by
// a single name relative to the folder's descriptor with O_NOFOLLOW, so it cannot leave the
// folder; raw descriptors avoid os.File's per-file bookkeeping on trees of many small files.
type dirFiles struct {
	f  *os.File
	fd int
}

func openDirFiles(root *os.Root, dir string) (*dirFiles, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	return &dirFiles{f: f, fd: int(f.Fd())}, nil
}

func (d *dirFiles) Close() error { return d.f.Close() }

func (d *dirFiles) ReadFile(rel string, sizeHint int64) ([]byte, error) {
	// O_NONBLOCK: a FIFO put where the listing saw a file must not hang the sidecar.
	fd, err := unix.Openat(d.fd, path.Base(rel), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &os.PathError{Op: "open", Path: rel, Err: fmt.Errorf("not a regular file")}
	}
	buf := make([]byte, 0, sizeHint+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: rel, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func (d *dirFiles) Readlink(rel string) (string, error) {
	b := make([]byte, 4096)
	n, err := unix.Readlinkat(d.fd, path.Base(rel), b)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: rel, Err: err}
	}
	return string(b[:n]), nil
}
