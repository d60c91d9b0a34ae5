// Package confinetest holds what the tests of confined agents share: skipping where the
// kernel cannot confine, and a loopback listener that counts the connections it got.
package confinetest

import (
	"net"
	"strconv"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// Landlock skips the test on a kernel without Landlock (it shows what the kernel refuses)
// and returns the ABI version.
func Landlock(t testing.TB) int {
	t.Helper()
	st := confine.Probe()
	if !st.Available() {
		t.Skipf("agents cannot be confined here: %s", st.Reason)
	}
	return st.ABI
}

// Listener listens on 127.0.0.1 (an OS-chosen port) until the test ends; accepted gets a
// value for each connection it accepts.
func Listener(t testing.TB) (port string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			got <- struct{}{}
		}
	}()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), got
}
