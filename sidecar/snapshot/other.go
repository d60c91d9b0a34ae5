//go:build !unix

package snapshot

import "errors"

// errUnsupported: snapshots walk folders through the descriptors of unix systems.
var errUnsupported = errors.New("snapshots of folders need a unix system")

// Take is not available here.
func (t *Tracker) Take(s *Store, dir string, lim Limits) (Result, error) {
	return Result{}, errUnsupported
}

// Checkout is not available here.
func Checkout(s *Store, tree ID, dir string, readOnly bool, t *Tracker) error { return errUnsupported }

// Switch is not available here.
func Switch(s *Store, dir string, from, to ID, t *Tracker) error { return errUnsupported }

// Prime is not available here.
func (t *Tracker) Prime(s *Store, dir string, tree ID) error { return errUnsupported }
