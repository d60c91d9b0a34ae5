//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package engine

// noEcho cannot turn echo off here: a secret is read with echo on (the terminal's own).
func noEcho(fd int) (restore func()) { return nil }
