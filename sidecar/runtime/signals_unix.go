//go:build unix

package runtime

import "syscall"

const (
	sigPause  = syscall.SIGTSTP
	sigResume = syscall.SIGCONT
	sigTerm   = syscall.SIGTERM
	sigKill   = syscall.SIGKILL
)
