package engine

import "golang.org/x/sys/unix"

// noEcho clears the terminal's ECHO flag (keeping line editing) and returns what restores it.
func noEcho(fd int) (restore func()) {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil
	}
	saved := *t
	t.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(fd, unix.TCSETS, t) != nil {
		return nil
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, &saved) }
}
