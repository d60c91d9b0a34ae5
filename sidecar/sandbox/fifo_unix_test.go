//go:build unix

package sandbox

import (
	"syscall"
	"testing"
)

func mkfifo(t *testing.T, name string) {
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Fatal(err)
	}
}
