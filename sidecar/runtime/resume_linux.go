package runtime

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// resumeCheckable: a resume's group is checked again from /proc (resume_unix.go).
const resumeCheckable = true

// stopSignals are SIGSTOP, SIGTSTP, SIGTTIN and SIGTTOU as bits of /proc's signal masks.
const stopSignals = 1<<(19-1) | 1<<(20-1) | 1<<(21-1) | 1<<(22-1)

// groupLeftStopped says whether a process of group pgid is stopped or has a stop signal
// pending (read from /proc; false when it cannot be read).
func groupLeftStopped(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pgrp, ok := procStat(pid)
		if !ok || pgrp != pgid {
			continue
		}
		if state == 'T' || stopPending(pid) {
			return true
		}
	}
	return false
}

// procStat is a process's state letter and process group, from /proc/PID/stat.
func procStat(pid int) (byte, int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return f[0][0], pgrp, err == nil
}

// stopPending says whether a stop signal is pending for the process (SigPnd or ShdPnd).
func stopPending(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(val), 16, 64); err == nil && mask&stopSignals != 0 {
			return true
		}
	}
	return false
}
