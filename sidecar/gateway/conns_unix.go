//go:build unix

package gateway

import "syscall"

// openFilesLimit is how many files the process may open (its soft limit, which Go raises to
// the hard one when it starts).
func openFilesLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 1 << 30
	}
	return int(l.Cur)
}
