package confine_test

import (
	"net"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// With ConnectPorts, a restricted thread may connect to those ports only.
func TestConnectPortsOnly(t *testing.T) {
	if confine.Probe().ABI < confine.MinConnectABI {
		t.Skipf("Landlock ABI %d here: TCP rules need %d", confine.Probe().ABI, confine.MinConnectABI)
	}
	gwPort, _ := confinetest.Listener(t)
	otherPort, _ := confinetest.Listener(t)
	port, _ := strconv.Atoi(gwPort)
	p := confine.Policy{Rules: []confine.Rule{{Access: confine.Read, Path: "/"}}, ConnectPorts: []uint16{uint16(port)}}
	dial := func(port string) error {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
		}
		return err
	}
	done := make(chan [2]error)
	go func() {
		runtime.LockOSThread()
		if _, err := p.RestrictThread(); err != nil {
			done <- [2]error{err, err}
			return
		}
		done <- [2]error{dial(gwPort), dial(otherPort)}
	}()
	r := <-done
	if r[0] != nil {
		t.Errorf("connect to the allowed port: %v", r[0])
	}
	if r[1] == nil {
		t.Error("connect to another port succeeded; want it refused")
	}
	if err := dial(otherPort); err != nil {
		t.Errorf("the rest of the process is restricted too: %v", err)
	}
}

func TestConnectPortsEncode(t *testing.T) {
	p := confine.Policy{ConnectPorts: []uint16{4242, 80}, Rules: []confine.Rule{{Access: confine.Read, Path: "/usr"}}}
	got, err := confine.Decode(p.Encode())
	if err != nil || !slices.Equal(got.ConnectPorts, p.ConnectPorts) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{"+connect=0", "+connect=70000", "+connect=x"} {
		if _, err := confine.Decode([]string{bad}); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
