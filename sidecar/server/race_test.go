//go:build race

package server

// Under the race detector the binary the tests drive is built with -race too.
func init() { buildFlags = append(buildFlags, "-race") }
