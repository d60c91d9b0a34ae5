package server

import (
	"fmt"
	"runtime"
	"sync"
)

// A bug is a broken invariant of the server itself (gopls's internal/util/bug habit): in
// production it is reported (stderr, window/logMessage, an internal-error answer) rather
// than crashing the sidecar; tests set panicOnBug so it fails loudly.
var panicOnBug = false

type bugError struct{ msg string }

func (e *bugError) Error() string { return "bug: " + e.msg }

var (
	bugMu   sync.Mutex
	bugSeen []string
)

// bugf records a broken invariant and returns it as an error.
func bugf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if _, file, line, ok := runtime.Caller(1); ok {
		msg = fmt.Sprintf("%s (at %s:%d)", msg, file, line)
	}
	if panicOnBug {
		panic("bug: " + msg)
	}
	bugMu.Lock()
	bugSeen = append(bugSeen, msg)
	bugMu.Unlock()
	return &bugError{msg}
}
