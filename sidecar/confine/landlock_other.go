//go:build !linux

package confine

import (
	"errors"
	"runtime"
)

// Probe reports that agents cannot be confined: Landlock is Linux's.
func Probe() Status {
	return Status{Reason: "Landlock is a Linux feature; agents are not confined on " + runtime.GOOS}
}

// ErrUnavailable is returned by RestrictThread where there is no Landlock.
var ErrUnavailable = errors.New("agents cannot be confined on " + runtime.GOOS)

// RestrictThread is Linux's only.
func (p Policy) RestrictThread() (int, error) { return 0, ErrUnavailable }

// FilterSupported is Linux's only.
func FilterSupported() bool { return false }
