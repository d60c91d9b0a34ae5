//go:build !unix

package runtime

import (
	"errors"
	"io"
	"syscall"
)

type osChild struct{ unconfined, failure string }

func (c *osChild) stdout() io.Reader           { return nil }
func (c *osChild) stderr() io.Reader           { return nil }
func (c *osChild) writeStdin(string) error     { return errStdinClosed }
func (c *osChild) closeStdin()                 {}
func (c *osChild) signal(syscall.Signal) error { return errors.ErrUnsupported }
func (c *osChild) wait() int                   { return -1 }
func (c *osChild) pid() int                    { return 0 }
func (c *osChild) release()                    {}

func spawnOS(argv []string, dir string, env []string, stdinData string, keepStdin bool, conf *confinement) (*osChild, error) {
	return nil, errors.New("runtime: agent processes are supported on Linux and other Unix systems only")
}
