//go:build unix

package wslock

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

var ioEOF = io.EOF

// tryLock takes the exclusive flock without waiting; false when another open file holds it.
func tryLock(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, unix.EINTR):
			continue
		}
		return false, err
	}
}

// unlock: closing the file releases the flock.
func unlock(*os.File) {}
