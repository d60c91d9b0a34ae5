//go:build unix

package proposal

import "syscall"

// noFollow opens the last name of a path without following it when it is a symlink.
const noFollow = syscall.O_NOFOLLOW
