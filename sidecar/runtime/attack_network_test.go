//go:build linux

package runtime

import (
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// udpListener listens for datagrams on 127.0.0.1 (network "udp4") or [::1] ("udp6") until
// the test ends; got reports whether one came.
func udpListener(t *testing.T, network string) (port string, got func() bool) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "udp6" {
		addr = "[::1]:0"
	}
	c, err := net.ListenPacket(network, addr)
	if err != nil {
		t.Skipf("no %s here: %v", network, err)
	}
	t.Cleanup(func() { c.Close() })
	return strconv.Itoa(c.LocalAddr().(*net.UDPAddr).Port), func() bool {
		// The sender is done (the agent's turn ended): a datagram it sent is queued already.
		raw, err := c.(*net.UDPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		n := -1
		_ = raw.Read(func(fd uintptr) bool {
			n, _, _ = syscall.Recvfrom(int(fd), make([]byte, 16), syscall.MSG_DONTWAIT)
			return true
		})
		return n >= 0
	}
}

// The network where Landlock decides it (runtime.network none, or a gateway-routed agent's
// gateway port only): Landlock's rules see TCP only, so every other way out must be closed
// by what the filter allows: an MPTCP connection (TCP's multipath kin, which reaches a plain
// TCP server too), UDP over IPv4 and IPv6, an ICMP echo socket. The listeners get nothing;
// the gateway's port still works for the routed agent. As root and as nobody, in a world and
// without.
func TestAttackNetworkOnlyWhatLandlockSees(t *testing.T) {
	if confinetest.Landlock(t) < minNetworkABI {
		t.Skip("TCP rules need Landlock ABI 4")
	}
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			for _, routed := range []bool{false, true} {
				gw, gwGot := confinetest.Listener(t)
				other, otherGot := confinetest.Listener(t)
				udp4, udp4Got := udpListener(t, "udp4")
				udp6, udp6Got := udpListener(t, "udp6")
				w := newConfinedWorld(t)
				s := w.spec("a", "")
				if routed {
					s.GatewayPort, _ = strconv.Atoi(gw)
				} else {
					s.Network = NetworkNone
				}
				s.Command = []string{attackBin, "mptcp=" + other, "udp=" + udp4, "udp6=" + udp6, "ping", "tcp=" + other, "tcp=" + gw}
				_, res := drain(t, start(t, s, ""), nil)
				t.Logf("uid %d, routed %v:\n%s", os.Getuid(), routed, res.Reply)
				for _, what := range []string{"mptcp", "udp", "udp6", "ping"} {
					expect(t, res.Reply, what, false)
				}
				if udp4Got() || udp6Got() {
					t.Error("a datagram got out")
				}
				select {
				case <-otherGot:
					t.Error("a connection got out")
				default:
				}
				if routed {
					select {
					case <-gwGot: // the gateway's port: allowed
					case <-time.After(deadline):
						t.Error("the routed agent did not reach the gateway's port")
					}
				}
			}
		})
	})
}
