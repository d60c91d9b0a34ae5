//go:build unix

package proposal

import (
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// dirs caches one descriptor per folder of the workspace. The workspace root is opened through
// os.Root; every folder below it is opened from its parent's descriptor by one name with
// O_DIRECTORY|O_NOFOLLOW, so a cached folder is a real folder reached without crossing any
// symlink. Every operation on a file is then a single system call on its folder's descriptor
// with a single name and no symlink following: it cannot leave that folder. This is what keeps
// a check and apply of many files close to git's cost.
type dirs struct {
	root *os.Root
	m    map[string]dirHandle
}

type dirHandle struct {
	f  *os.File // the root's, kept open; nil for folders opened raw
	fd int      // taken once: each File.Fd call costs an fcntl
}

func (h dirHandle) close() {
	if h.f != nil {
		h.f.Close()
	} else {
		unix.Close(h.fd)
	}
}

func newDirs(root *os.Root) *dirs { return &dirs{root: root, m: map[string]dirHandle{}} }

func (d *dirs) fd(dir string) (int, error) {
	if dir == "" {
		dir = "."
	}
	if h, ok := d.m[dir]; ok {
		return h.fd, nil
	}
	if dir == "." {
		f, err := d.root.Open(".")
		if err != nil {
			return -1, err
		}
		h := dirHandle{f: f, fd: int(f.Fd())}
		d.m[dir] = h
		return h.fd, nil
	}
	parent, err := d.fd(path.Dir(dir))
	if err != nil {
		return -1, err
	}
	fd, err := unix.Openat(parent, path.Base(dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP {
		err = unix.ENOTDIR // a symlink where a folder should be
	}
	if err != nil {
		return -1, pathErr("open", dir, err)
	}
	d.m[dir] = dirHandle{fd: fd}
	return fd, nil
}

// has reports whether dir is cached, that is known to be a real folder.
func (d *dirs) has(dir string) bool { _, ok := d.m[dir]; return ok }

func (d *dirs) split(p string) (int, string, error) {
	fd, err := d.fd(path.Dir(p))
	return fd, path.Base(p), err
}

func pathErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: p, Err: err}
}

// statInfo is the fs.FileInfo of an fstatat.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(int64(s.st.Mtim.Sec), int64(s.st.Mtim.Nsec)) }
func (s *statInfo) IsDir() bool        { return s.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (s *statInfo) Sys() any           { return &s.st }
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	default:
		m |= fs.ModeDevice
	}
	return m
}

func (d *dirs) lstat(p string) (fs.FileInfo, error) {
	fd, n, err := d.split(p)
	if err != nil {
		return nil, err
	}
	s := &statInfo{name: n}
	for {
		err = unix.Fstatat(fd, n, &s.st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, pathErr("lstat", p, err)
	}
	return s, nil
}

func (d *dirs) readFile(p string) ([]byte, error) {
	dfd, n, err := d.split(p)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat(dfd, n, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, pathErr("stat", p, err)
	}
	buf := make([]byte, 0, st.Size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, pathErr("read", p, err)
		}
		if m == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+m]
	}
}

// open opens the regular file p for reading, without following a symlink (nor blocking on a
// fifo put in its place).
func (d *dirs) open(p string) (io.ReadCloser, error) {
	dfd, n, err := d.split(p)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat(dfd, n, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return &rawReader{fd: fd, name: p}, nil
}

// rawReader reads a file through its raw descriptor (no os.File bookkeeping per file).
type rawReader struct {
	fd   int
	name string
}

func (r *rawReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(r.fd, b)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, pathErr("read", r.name, err)
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r *rawReader) Close() error { return pathErr("close", r.name, unix.Close(r.fd)) }

func (d *dirs) readlink(p string) (string, error) {
	fd, n, err := d.split(p)
	if err != nil {
		return "", err
	}
	for size := 256; ; size *= 2 {
		b := make([]byte, size)
		m, err := unix.Readlinkat(fd, n, b)
		if err != nil {
			return "", pathErr("readlink", p, err)
		}
		if m < size {
			return string(b[:m]), nil
		}
	}
}

func (d *dirs) remove(p string) error {
	fd, n, err := d.split(p)
	if err != nil {
		return err
	}
	return pathErr("remove", p, unix.Unlinkat(fd, n, 0))
}

// removeMany removes every path, ignoring errors, on two threads: unlinking a file's last name
// frees its blocks, and two threads do 100 of those in about two thirds of the time one takes.
// The folders are opened first, here, so the threads share no cache.
func (d *dirs) removeMany(paths []string) {
	type target struct {
		fd   int
		name string
	}
	ts := make([]target, 0, len(paths))
	for _, p := range paths {
		if fd, n, err := d.split(p); err == nil {
			ts = append(ts, target{fd, n})
		}
	}
	var wg sync.WaitGroup
	half := len(ts) / 2
	wg.Go(func() {
		for _, t := range ts[:half] {
			unix.Unlinkat(t.fd, t.name, 0)
		}
	})
	for _, t := range ts[half:] {
		unix.Unlinkat(t.fd, t.name, 0)
	}
	wg.Wait()
}

func (d *dirs) rmdir(p string) error {
	fd, n, err := d.split(p)
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(fd, n, unix.AT_REMOVEDIR); err != nil {
		return pathErr("rmdir", p, err)
	}
	d.forget(p)
	return nil
}

func (d *dirs) mkdir(p string, perm fs.FileMode) error {
	fd, n, err := d.split(p)
	if err != nil {
		return err
	}
	return pathErr("mkdir", p, unix.Mkdirat(fd, n, uint32(perm.Perm())))
}

func (d *dirs) symlink(target, p string) error {
	fd, n, err := d.split(p)
	if err != nil {
		return err
	}
	return pathErr("symlink", p, unix.Symlinkat(target, fd, n))
}

// chmod sets the permission bits of the regular file p, opened without following a symlink.
func (d *dirs) chmod(p string, perm fs.FileMode) error {
	dfd, n, err := d.split(p)
	if err != nil {
		return err
	}
	fd, err := unix.Openat(dfd, n, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathErr("open", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return pathErr("stat", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return pathErr("chmod", p, unix.EINVAL)
	}
	return pathErr("chmod", p, unix.Fchmod(fd, uint32(perm.Perm())))
}

// rawFile is a file being written through its raw descriptor.
type rawFile struct {
	fd   int
	name string
	made fs.FileMode // the permission bits it was made with, less the umask
}

func (f *rawFile) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Write(f.fd, b[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, pathErr("write", f.name, err)
		}
		n += m
	}
	return n, nil
}

// Chmod sets the permission bits, skipping the call (an inode update) when the umask already
// left them right: known from the umask when the file was made with m (create), else by fstat.
func (f *rawFile) Chmod(m fs.FileMode) error {
	if um, ok := processUmask(); ok && f.made == m.Perm() && m.Perm()&^um == m.Perm() {
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(f.fd, &st) == nil && uint32(st.Mode)&0o7777 == uint32(m.Perm()) {
		return nil
	}
	return pathErr("chmod", f.name, unix.Fchmod(f.fd, uint32(m.Perm())))
}

func (f *rawFile) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return pathErr("close", f.name, err)
}

func (d *dirs) create(p string, perm fs.FileMode) (writeFile, error) {
	dfd, n, err := d.split(p)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat(dfd, n, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return &rawFile{fd: fd, name: p, made: perm.Perm()}, nil
}

// rename moves from to p within one folder.
func (d *dirs) rename(from, p string) error {
	fd, n, err := d.split(p)
	if err != nil {
		return err
	}
	return pathErr("rename", p, unix.Renameat(fd, path.Base(from), fd, n))
}

func (d *dirs) forget(dir string) {
	for k, h := range d.m {
		if k == dir || strings.HasPrefix(k, dir+"/") {
			h.close()
			delete(d.m, k)
		}
	}
}

func (d *dirs) close() {
	for _, h := range d.m {
		h.close()
	}
	d.m = map[string]dirHandle{}
}

// processUmask reads the process's umask once, from /proc/self/status (Linux 4.7 and later):
// umask(2) cannot read it without setting it, a race with every other goroutine making files.
var processUmask = sync.OnceValues(func() (fs.FileMode, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return fs.FileMode(n) & fs.ModePerm, err == nil
		}
	}
	return 0, false
})
