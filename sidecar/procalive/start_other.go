//go:build !linux

package procalive

// StartTime is not known outside Linux: a process is then told by its id alone.
func StartTime(pid int) (ticks uint64, ok bool) { return 0, false }
