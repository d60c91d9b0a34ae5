//go:build !unix

// Package procalive tells whether a process recorded earlier (a run's engine, a revision
// run) still exists, so state it left behind can be told from state a live process owns.
package procalive

import "os"

// Alive reports whether process pid exists.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}

// Same is Alive where process start times are not known.
func Same(pid int, start uint64) bool { return Alive(pid) }
