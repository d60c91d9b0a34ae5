package confine

import (
	"net"
	"runtime"
	"slices"
	"testing"
)

func listen(t *testing.T) (net.Listener, uint16) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln, uint16(ln.Addr().(*net.TCPAddr).Port)
}

// With ConnectPorts, a restricted thread may connect to those ports only.
func TestConnectPortsOnly(t *testing.T) {
	if Probe().ABI < MinConnectABI {
		t.Skipf("Landlock ABI %d here: TCP rules need %d", Probe().ABI, MinConnectABI)
	}
	gw, gwPort := listen(t)
	other, _ := listen(t)
	p := Policy{Rules: []Rule{{Read, "/"}}, ConnectPorts: []uint16{gwPort}}
	done := make(chan [2]error)
	go func() {
		runtime.LockOSThread()
		if _, err := p.RestrictThread(); err != nil {
			done <- [2]error{err, err}
			return
		}
		c1, err1 := net.Dial("tcp", gw.Addr().String())
		if err1 == nil {
			c1.Close()
		}
		c2, err2 := net.Dial("tcp", other.Addr().String())
		if err2 == nil {
			c2.Close()
		}
		done <- [2]error{err1, err2}
	}()
	r := <-done
	if r[0] != nil {
		t.Errorf("connect to the allowed port: %v", r[0])
	}
	if r[1] == nil {
		t.Error("connect to another port succeeded; want it refused")
	}
	if c, err := net.Dial("tcp", other.Addr().String()); err != nil {
		t.Errorf("the rest of the process is restricted too: %v", err)
	} else {
		c.Close()
	}
}

func TestConnectPortsEncode(t *testing.T) {
	p := Policy{ConnectPorts: []uint16{4242, 80}, Rules: []Rule{{Read, "/usr"}}}
	got, err := Decode(p.Encode())
	if err != nil || !slices.Equal(got.ConnectPorts, p.ConnectPorts) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{"+connect=0", "+connect=70000", "+connect=x"} {
		if _, err := Decode([]string{bad}); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
