//go:build !unix

package wslock

import (
	"io"
	"os"
	"sync"
)

var ioEOF = io.EOF

// Without flock the lock is only the process's own: its writers still take turns, but a
// second process is not excluded.
var (
	heldMu sync.Mutex
	held   = map[string]bool{}
)

func tryLock(f *os.File) (bool, error) {
	heldMu.Lock()
	defer heldMu.Unlock()
	if held[f.Name()] {
		return false, nil
	}
	held[f.Name()] = true
	return true, nil
}

func unlock(f *os.File) {
	heldMu.Lock()
	delete(held, f.Name())
	heldMu.Unlock()
}
