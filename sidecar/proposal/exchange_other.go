//go:build !linux

package proposal

import (
	"errors"
	"os"
)

// exchange: only Linux swaps two names in one call; the caller links and renames instead.
func (d *dirs) exchange(from, p string) error { return errors.ErrUnsupported }

// startWriteback: where nothing is swapped, the rename over the file is what it always was.
func startWriteback(f writeFile) error { return nil }

// startFileWriteback: elsewhere the sync at the commit point does it all.
func startFileWriteback(f *os.File) {}

// datasync makes f's data durable.
func datasync(f *os.File) error { return f.Sync() }
