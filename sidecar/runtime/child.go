package runtime

import (
	"errors"
	"io"
	"sync"
	"syscall"
)

// child is one running turn: an OS process group, or the in-process dry-run agent.
type child interface {
	stdout() io.Reader
	stderr() io.Reader // nil when there is none
	// writeStdin writes to the agent's stdin; it fails once stdin is closed.
	writeStdin(s string) error
	closeStdin()
	// signal sends sig to the agent's whole process group (a no-op in-process).
	signal(sig syscall.Signal) error
	// wait blocks until the agent and everything it started are gone; it returns the exit
	// code (128+N when killed by signal N).
	wait() int
	pid() int
	// release frees the pipes once stdout and stderr were read to the end and wait returned.
	release()
}

// stdinWriter serialises writes to a child's stdin and makes writes after close an error.
type stdinWriter struct {
	mu     sync.Mutex
	w      io.WriteCloser
	closed bool
}

var errStdinClosed = errors.New("the agent's stdin is closed")

func (s *stdinWriter) write(str string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.w == nil {
		return errStdinClosed
	}
	_, err := io.WriteString(s.w, str)
	return err
}

func (s *stdinWriter) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.w != nil {
		s.w.Close()
	}
	s.closed = true
}

// inprocChild runs the dry-run agent: its whole output is produced at start.
type inprocChild struct {
	r *io.PipeReader
}

func startInproc(out string) *inprocChild {
	r, w := io.Pipe()
	go func() {
		_, _ = io.WriteString(w, out)
		w.Close()
	}()
	return &inprocChild{r: r}
}

func (c *inprocChild) stdout() io.Reader           { return c.r }
func (c *inprocChild) stderr() io.Reader           { return nil }
func (c *inprocChild) writeStdin(string) error     { return errStdinClosed }
func (c *inprocChild) closeStdin()                 {}
func (c *inprocChild) signal(syscall.Signal) error { return nil }
func (c *inprocChild) wait() int                   { return 0 }
func (c *inprocChild) pid() int                    { return 0 }
func (c *inprocChild) release()                    { c.r.Close() }
