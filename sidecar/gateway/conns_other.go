//go:build !unix

package gateway

// openFilesLimit is how many files the process may open: no limit that a connection count
// could reach is known here.
func openFilesLimit() int { return 1 << 30 }
