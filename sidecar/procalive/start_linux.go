package procalive

import (
	"bytes"
	"os"
	"strconv"
)

// StartTime is when process pid started, in clock ticks since boot (field 22 of
// /proc/PID/stat); ok is false when it cannot be read (no such process).
func StartTime(pid int) (ticks uint64, ok bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces or ")": the fields
	// after it start after its last ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(b[i+1:])
	const startField = 22 - 3 // fields 3… follow the name
	if len(fields) <= startField {
		return 0, false
	}
	v, err := strconv.ParseUint(string(fields[startField]), 10, 64)
	return v, err == nil
}
