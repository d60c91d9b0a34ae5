//go:build !linux

package proposal

import "errors"

// exchange: only Linux swaps two names in one call; the caller links and renames instead.
func (d *dirs) exchange(from, p string) error { return errors.ErrUnsupported }

// startWriteback: where nothing is swapped, the rename over the file is what it always was.
func startWriteback(f writeFile) error { return nil }
