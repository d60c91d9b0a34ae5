//go:build !linux

package proposal

import "errors"

// exchange: only Linux swaps two names in one call; the caller links and renames instead.
func (d *dirs) exchange(from, p string) error { return errors.ErrUnsupported }
