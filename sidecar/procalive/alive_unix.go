//go:build unix

// Package procalive tells whether a process recorded earlier (a run's engine, a revision
// run) still exists, so state it left behind can be told from state a live process owns.
package procalive

import (
	"errors"
	"syscall"
)

// Alive reports whether process pid exists (signal 0 reaches it, or it exists but belongs to
// another user).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Same reports whether process pid is still the process that had started at start
// (StartTime): a process id the system gave to another process since is not. With start 0
// (not recorded) or where start times are not known, it is Alive.
func Same(pid int, start uint64) bool {
	if !Alive(pid) {
		return false
	}
	now, ok := StartTime(pid)
	return start == 0 || !ok || now == start
}
