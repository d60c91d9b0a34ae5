//go:build unix

package runtime

import (
	"os"
	"strconv"
	"syscall"
)

// closeOnExecInherited marks every descriptor of this process from 3 up close-on-exec. Go
// opens its own so; one without the flag was inherited from the shell or editor that started
// the process (a terminal, a pipe), and every program started from here would inherit it in
// turn: an agent holding the person's terminal could write escapes onto it and read what is
// typed there, whatever its rules say. So a process started here gets what its starter
// passes (an agent: its stdin, stdout and stderr), nothing else. Called before each start.
func closeOnExecInherited() {
	d, err := os.Open("/dev/fd") // Linux: /proc/self/fd
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
