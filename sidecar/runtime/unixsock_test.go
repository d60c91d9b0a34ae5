//go:build linux

package runtime

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// socketListeners are a stream socket (like the Docker socket) and a datagram socket (like
// /dev/log) in a folder outside every sandbox; got receives a value per connection accepted
// or datagram received.
func socketListeners(t *testing.T) (stream, dgram string, got <-chan string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "us-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	stream, dgram = filepath.Join(dir, "docker.sock"), filepath.Join(dir, "log.sock")
	ln, err := net.Listen("unix", stream)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("unixgram", dgram)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); pc.Close() })
	ch := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HELLO\n"))
			c.Close()
			ch <- "stream"
		}
	}()
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			ch <- "datagram"
		}
	}()
	return stream, dgram, ch
}

// unixSocketScript tries, with perl (its error names the socket: "connect PATH: Permission
// denied"): a connect to the stream socket, a datagram to the datagram socket through a
// socketpair's socket (a pair's datagram socket may send anywhere), the same through a pair
// asked for as SOCK_RAW (which the kernel makes a datagram pair), a stream socketpair, and a
// socket server of its own in its TMPDIR.
func unixSocketScript(stream, dgram string) string {
	return strings.Join([]string{
		`perl -MIO::Socket::UNIX -e '$s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "connect $ARGV[0]: $!\n"; print "CONNECTED ", scalar <$s>' ` + stream + ` || echo "REFUSED connect"`,
		`perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_DGRAM, 0) or die "socketpair dgram: $!\n"; send($a, "x", 0, pack_sockaddr_un($ARGV[0])) or die "send $ARGV[0]: $!\n"; print "SENT\n"' ` + dgram + ` || echo "REFUSED datagram"`,
		`perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_RAW, 0) or die "socketpair raw: $!\n"; send($a, "x", 0, pack_sockaddr_un($ARGV[0])) or die "send $ARGV[0]: $!\n"; print "RAWSENT\n"' ` + dgram + ` || echo "REFUSED rawpair"`,
		`perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die "socketpair: $!\n"; syswrite($a, "pair\n"); sysread($b, my $l, 5); print "PAIR $l\n"'`,
		`perl -MIO::Socket::UNIX -e '$p = "$ENV{TMPDIR}/own.sock"; unlink $p; $l = IO::Socket::UNIX->new(Local => $p, Listen => 1) or die "listen $p: $!\n"; IO::Socket::UNIX->new(Peer => $p) or die "connect $p: $!\n"; print "OWN ok\n"' || echo "REFUSED own"`,
	}, "\n")
}

// inWorlds runs body with worlds on and with them off (as on a kernel that refuses
// namespaces), as subtests.
func inWorlds(t *testing.T, body func(t *testing.T, world bool)) {
	for _, world := range []bool{true, false} {
		name := "world"
		if !world {
			name = "no-world"
		}
		t.Run(name, func(t *testing.T) {
			if !world {
				t.Setenv(noWorldEnv, "1")
			}
			body(t, world)
		})
	}
}

// A confined agent can reach no pathname Unix socket outside its sandbox: its connect to a
// stream socket (like the Docker socket) is refused, and so is a datagram through a
// socketpair, asked for as datagram or as SOCK_RAW; the listeners get nothing. A stream
// socketpair still works. In a world, the socket files outside are not there at all, and the
// agent's own socket server in its TMPDIR works; without one, every Unix socket is refused
// and the refusal is a denied event naming the socket. As root and as nobody.
func TestConfinedUnixSocketRefused(t *testing.T) {
	confinetest.Landlock(t)
	if !confine.FilterSupported() {
		t.Skip("no Unix-socket filter on this architecture")
	}
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			stream, dgram, got := socketListeners(t)
			w := newConfinedWorld(t)
			evs, res := drain(t, start(t, w.spec("a", unixSocketScript(stream, dgram)), ""), nil)
			t.Logf("uid %d:\n%s", os.Getuid(), res.Reply)
			own := "REFUSED own"
			if world {
				own = "OWN ok"
			}
			for _, want := range []string{"REFUSED connect", "REFUSED datagram", "REFUSED rawpair", "PAIR pair", own} {
				if !strings.Contains(res.Reply, want) {
					t.Errorf("reply lacks %q", want)
				}
			}
			select {
			case what := <-got:
				t.Errorf("the listener got a %s from a confined agent", what)
			default:
			}
			var denied []string
			for _, ev := range ofKind(evs, EventDenied) {
				denied = append(denied, ev.Text)
			}
			if !world && !slices.Contains(denied, stream) {
				t.Errorf("no denied event for %s; denied: %q", stream, denied)
			}
		})
	})
}

// runtime.unixSockets granting the stream socket: the same agent connects and the listener
// sees it, and the agent's turns say what the grant opens. Without a world the grant opens
// every Unix socket (the datagram goes through too); in a world only the granted socket is
// there. As root and as nobody.
func TestConfinedUnixSocketGranted(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			stream, dgram, got := socketListeners(t)
			w := newConfinedWorld(t)
			s := w.spec("a", unixSocketScript(stream, dgram))
			s.UnixSockets = []string{stream}
			evs, res := drain(t, start(t, s, ""), nil)
			want, wantGot := []string{"CONNECTED HELLO", "SENT", "PAIR pair"}, 2
			if world {
				want, wantGot = []string{"CONNECTED HELLO", "REFUSED datagram", "PAIR pair"}, 1
			}
			for _, w := range want {
				if !strings.Contains(res.Reply, w) {
					t.Errorf("reply lacks %q:\n%s", w, res.Reply)
				}
			}
			seen := map[string]bool{}
			guard := time.After(deadline) // against hanging only: the listeners got something or nothing
			for len(seen) < wantGot {
				select {
				case k := <-got:
					seen[k] = true
				case <-guard:
					t.Fatalf("the listeners got %v, want %d kinds", seen, wantGot)
				}
			}
			if !slices.ContainsFunc(ofKind(evs, EventWarning), func(ev Event) bool {
				return strings.Contains(ev.Reason, "runtime.unixSockets grants "+stream)
			}) {
				t.Errorf("no warning about the grant: %v", ofKind(evs, EventWarning))
			}
		})
	})
}

// A hostile model drives each real CLI, confined, to its socket-file attack through the CLI's
// own shell tool: the connect and the datagram are refused, the listeners get nothing, and
// the stream pair the CLI's children may need still works. As root and as nobody.
func TestHostileCLICannotReachSocketFile(t *testing.T) {
	for _, a := range cliAttacks() {
		t.Run(a.cli.Name, func(t *testing.T) {
			exe := a.cli.Binary(t)
			confinetest.Landlock(t)
			if !confine.FilterSupported() {
				t.Skip("no Unix-socket filter on this architecture")
			}
			confinetest.AsRootAndNobody(t, func(t *testing.T) {
				stream, dgram, got := socketListeners(t)
				s, work := hostileSpec(t, a.cli, exe)
				attack := filepath.Join(filepath.Dir(work), "input", "sockets.sh")
				writeTestFile(t, attack, "exec > \"$PWD/sockets.log\" 2>&1\n"+unixSocketScript(stream, dgram)+"\n")
				srv := a.cli.Start(t, script(modelserver.Reply{Text: "Working.", Calls: []modelserver.Call{a.shell("bash " + attack)}},
					modelserver.Reply{Text: "Done."}))
				s.Env = a.cli.Env(t, srv)
				a.spec(&s)
				evs, res := drainWithin(t, start(t, s, "Fix the README."), nil, realDeadline)
				log, _ := os.ReadFile(filepath.Join(work, "sockets.log"))
				if res.Status != StatusCompleted || !strings.Contains(string(log), "PAIR pair") {
					logRun(t, run{evs: evs, res: res, srv: srv})
					t.Fatalf("the attack did not run through: %s %s; sockets.log:\n%s", res.Status, res.Reason, log)
				}
				t.Logf("sockets.log (uid %d):\n%s", os.Getuid(), log)
				for _, want := range []string{"REFUSED connect", "REFUSED datagram"} {
					if !strings.Contains(string(log), want) {
						t.Errorf("sockets.log lacks %q", want)
					}
				}
				select {
				case what := <-got:
					t.Errorf("the listener got a %s from a confined %s", what, a.cli.Name)
				default:
				}
			})
		})
	}
}
