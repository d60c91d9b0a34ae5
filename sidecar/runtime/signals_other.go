//go:build !unix

package runtime

import "syscall"

const (
	sigPause  = syscall.Signal(0x14)
	sigResume = syscall.Signal(0x12)
	sigTerm   = syscall.SIGTERM
	sigKill   = syscall.SIGKILL
)
