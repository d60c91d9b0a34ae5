package engine

import (
	"fmt"
	"os"
	"path/filepath"
)

// A run resumed twice at once (two terminals, a terminal and the editor) would have two
// engines write one run's checkpoint, log and sandboxes. Both would find it resumable before
// either wrote its first checkpoint; the resume lock lets one of them through. It is held
// until the run's engine is done with it (or its process ends).

// lockResume takes the resume lock of run id in workspace; the returned file holds it.
func lockResume(workspace, id string) (*os.File, error) {
	dir := filepath.Join(workspace, RunsDir, id)
	f, err := os.OpenFile(filepath.Join(dir, "resume.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("run %s: resume lock: %w", id, err)
	}
	ok, err := tryLockFile(f)
	if err != nil || !ok {
		f.Close()
		if err == nil {
			err = fmt.Errorf("run %s is being resumed by another process", id)
		}
		return nil, err
	}
	return f, nil
}
