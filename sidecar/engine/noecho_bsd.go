//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package engine

import "golang.org/x/sys/unix"

// noEcho clears the terminal's ECHO flag (keeping line editing) and returns what restores it.
func noEcho(fd int) (restore func()) {
	t, err := unix.IoctlGetTermios(fd, unix.TIOCGETA)
	if err != nil {
		return nil
	}
	saved := *t
	t.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(fd, unix.TIOCSETA, t) != nil {
		return nil
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TIOCSETA, &saved) }
}
