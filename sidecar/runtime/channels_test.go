//go:build linux

package runtime

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"golang.org/x/sys/unix"
)

// The channel tests of docs/security.md: each runs testdata/attack as a confined worker
// (a real process, through the guardian) against one channel between an agent and the rest
// of the machine, as root and as nobody, in a world and without one.

// attacked runs the attacker with args as agent a of w and returns what it printed.
func attacked(t *testing.T, w confinedWorld, args ...string) string {
	t.Helper()
	s := w.spec("a", "")
	s.Command = append([]string{attackBin}, args...)
	_, res := drain(t, start(t, s, ""), nil)
	if res.Status != StatusCompleted {
		t.Fatalf("the attacker: %s %s\n%s", res.Status, res.Reason, res.Reply)
	}
	t.Logf("uid %d:\n%s", os.Getuid(), res.Reply)
	return res.Reply
}

// expect checks one attempt's outcome in the attacker's output.
func expect(t *testing.T, out, what string, allowed bool) {
	t.Helper()
	want := "REFUSED " + what
	if allowed {
		want = "ALLOWED " + what
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, want+":") || l == want || strings.HasPrefix(l, want+" ") {
			return
		}
	}
	t.Errorf("want %q in:\n%s", want, out)
}

// disk is the first disk of the machine ("" when there is none to name).
func disk() string {
	ents, _ := os.ReadDir("/sys/block")
	for _, e := range ents {
		if n := e.Name(); !strings.HasPrefix(n, "loop") && !strings.HasPrefix(n, "ram") && !strings.HasPrefix(n, "zram") {
			return "/dev/" + n
		}
	}
	return ""
}

// Devices: only the harmless ones open. The disk, the kernel's log, a device node made in
// work/ (as root, where CAP_MKNOD would have allowed it) and /dev/tty are refused;
// /dev/null works. As root and as nobody, in a world and without.
func TestChannelDevices(t *testing.T) {
	confinetest.Landlock(t)
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			w := newConfinedWorld(t)
			node := filepath.Join(w.sandbox["a"], "work", "disk")
			args := []string{"read=/dev/kmsg", "mknod-block=" + node, "tty", "read=/dev/null", "write=/dev/null"}
			if d := disk(); d != "" {
				args = append(args, "read="+d)
			}
			out := attacked(t, w, args...)
			for _, refused := range []string{"read=/dev/kmsg", "mknod-block", "tty"} {
				expect(t, out, strings.Split(refused, "=")[0], false)
			}
			if strings.Count(out, "ALLOWED read") != 1 || strings.Count(out, "ALLOWED write") != 1 {
				t.Errorf("want /dev/null read and written, nothing else:\n%s", out)
			}
			if _, err := os.Lstat(node); err == nil {
				t.Error("a device node was made in work/")
			}
		})
	})
}

// Shared memory and IPC: the person's /dev/shm object, System V segment and message queue,
// and the user's keyring are out of reach; what the agent writes to /dev/shm reaches no one
// and goes with the run (in a world it is the agent's own; without one it is refused).
func TestChannelSharedMemory(t *testing.T) {
	confinetest.Landlock(t)
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			const secret = "PERSON-SHM-SECRET"
			shm := fmt.Sprintf("/dev/shm/agentcanvas-person-%d", os.Getpid())
			if err := os.WriteFile(shm, []byte(secret), 0o600); err != nil {
				t.Skipf("no /dev/shm here: %v", err)
			}
			t.Cleanup(func() { os.Remove(shm) })
			key := 0x4143000 + os.Getpid()%4096
			id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|0o600)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
			if b, err := unix.SysvShmAttach(id, 0, 0); err == nil {
				copy(b, secret)
				_ = unix.SysvShmDetach(b)
			}
			mq := fmt.Sprintf("/agentcanvas-person-%d", os.Getpid())
			name, _ := unix.BytePtrFromString(mq[1:])
			fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafePointer(name)), unix.O_CREAT|unix.O_RDWR, 0o600, 0, 0, 0)
			if e != 0 {
				t.Fatalf("mq_open: %v", e)
			}
			unix.Close(int(fd))
			t.Cleanup(func() { _, _, _ = unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafePointer(name)), 0, 0) })
			w := newConfinedWorld(t)
			own := fmt.Sprintf("/dev/shm/agentcanvas-agent-%d", os.Getpid())
			t.Cleanup(func() { os.Remove(own) })
			out := attacked(t, w, "read="+shm, "write="+shm, "sysv-shm="+strconv.Itoa(key), "mq="+mq[1:], "keyring", "write="+own)
			expect(t, out, "sysv-shm", false)
			expect(t, out, "mq", false)
			expect(t, out, "keyring", false)
			if strings.Count(out, "REFUSED read") != 1 || strings.Contains(out, secret) {
				t.Errorf("the person's /dev/shm object was read:\n%s", out)
			}
			if b, _ := os.ReadFile(shm); string(b) != secret {
				t.Errorf("the person's /dev/shm object changed: %q", b)
			}
			// In a world both writes land in its own /dev/shm (the person's object is not there).
			if world && strings.Count(out, "ALLOWED write") != 2 || !world && strings.Contains(out, "ALLOWED write") {
				t.Errorf("writes to /dev/shm: want both to its own in a world, none without:\n%s", out)
			}
			if _, err := os.Lstat(own); err == nil {
				t.Errorf("%s is on the system's /dev/shm", own)
			}
		})
	})
}

// The system-call ABIs and what the filter refuses by list: int 0x80 (the 32-bit ABI from a
// 64-bit program), x32's numbers, io_uring, a packet socket.
func TestChannelSyscalls(t *testing.T) {
	confinetest.Landlock(t)
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		out := attacked(t, newConfinedWorld(t), "int80", "x32", "io_uring", "packet")
		for _, what := range []string{"int80", "x32", "io_uring", "packet"} {
			expect(t, out, what, false)
		}
	})
}

// Signals: the agent kills every process it may (kill(-1, SIGKILL)), and a process of the
// person's by its id: the person's process, the sidecar and the guardian live on.
func TestChannelSignals(t *testing.T) {
	if confinetest.Landlock(t) < 6 {
		t.Skip("signals are scoped from Landlock ABI 6")
	}
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		canary := exec.Command("sleep", "1000")
		if err := canary.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = canary.Process.Kill(); _ = canary.Wait() })
		out := attacked(t, newConfinedWorld(t), "kill="+strconv.Itoa(canary.Process.Pid), "kill="+strconv.Itoa(os.Getpid()), "kill-all")
		if strings.Contains(out, "ALLOWED kill ") || strings.Count(out, "REFUSED kill:") != 2 {
			t.Errorf("want both kills refused:\n%s", out)
		}
		if err := canary.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("the person's process is gone: %v", err)
		}
	})
}

// /proc: the sidecar's open files, working folder and root, through /proc/<pid>/fd, cwd and
// root, are closed to the agent (Landlock's ptrace rule), as root and as nobody.
func TestChannelProc(t *testing.T) {
	confinetest.Landlock(t)
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret.txt")
		if err := os.WriteFile(secret, []byte("SIDECAR-FILE-SECRET"), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(secret)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		me := "/proc/" + strconv.Itoa(os.Getpid())
		out := attacked(t, newConfinedWorld(t), "read="+me+"/fd/"+strconv.Itoa(int(f.Fd())), "read="+me+"/root"+secret, "read="+me+"/cwd/main_test.go", "read="+me+"/environ")
		if strings.Contains(out, "ALLOWED") || strings.Contains(out, "SECRET") {
			t.Errorf("the agent reached the sidecar through /proc:\n%s", out)
		}
	})
}

// Sockets and the network: an abstract Unix socket of the person's is out of reach (the
// filter without a world, Landlock's scope in one); with network none, a UDP datagram to a
// loopback listener is refused in a world (a network namespace with nothing in it). Without a
// world only TCP is refused before Landlock ABI 10 (docs/security.md).
func TestChannelSocketsAndNetwork(t *testing.T) {
	if confinetest.Landlock(t) < 6 {
		t.Skip("abstract sockets are scoped from Landlock ABI 6")
	}
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			name := fmt.Sprintf("agentcanvas-person-%d-%v", os.Getpid(), world)
			ln, err := net.Listen("unix", "@"+name)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer udp.Close()
			w := newConfinedWorld(t)
			s := w.spec("a", "")
			s.Network = NetworkNone
			s.Command = []string{attackBin, "abstract=" + name, "udp=" + strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)}
			_, res := drain(t, start(t, s, ""), nil)
			t.Logf("uid %d:\n%s", os.Getuid(), res.Reply)
			expect(t, res.Reply, "abstract", false)
			if world {
				expect(t, res.Reply, "udp", false)
			}
		})
	})
}

func unsafePointer(p *byte) unsafe.Pointer { return unsafe.Pointer(p) }

// ttySidecar is the sidecar of TestChannelTerminal, started on a terminal of its own (the
// person's): it runs the attacker ($ATTACK_ARGS) as a confined agent and prints what it said.
func ttySidecar() int {
	ws, err := os.MkdirTemp("", "tty-ws-")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer os.RemoveAll(ws)
	defer RemoveTemp("tty")
	p, err := Start(context.Background(), Spec{RunID: "tty", AgentID: "a", BackendID: BackendCommand, Workspace: ws, Confine: confine.ModeRequired,
		Command: append([]string{os.Getenv(attackEnv)}, strings.Fields(os.Getenv("ATTACK_ARGS"))...)}, "")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	for range p.Events() {
	}
	fmt.Print(p.Wait().Reply)
	return 0
}

// openPTY makes a pseudo-terminal: its master, its other end's name and an open descriptor
// of that end.
func openPTY(t *testing.T) (master *os.File, name string, slave *os.File) {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	master = os.NewFile(uintptr(m), "ptmx")
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	name = "/dev/pts/" + strconv.Itoa(n)
	slave, err = os.OpenFile(name, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, name, slave
}

// readNow reads what f has now, without waiting.
func readNow(f *os.File) string {
	fd := int(f.Fd())
	_ = unix.SetNonblock(fd, true)
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			return b.String()
		}
		b.Write(buf[:n])
	}
}

// The person's terminal: the sidecar runs on one (its controlling terminal), and a confined
// agent goes for it by name: opens /dev/tty, types a command into it with TIOCSTI, writes an
// OSC 52 clipboard write and a title onto it, and takes it as its own controlling terminal
// after setsid. Each is refused; nothing reached the terminal's input or its screen. As root
// and as nobody, in a world and without.
func TestChannelTerminal(t *testing.T) {
	confinetest.Landlock(t)
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			master, pts, slave := openPTY(t)
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), "RUNTIME_TEST_HELPER=tty-sidecar", attackEnv+"="+attackBin,
				"ATTACK_ARGS=tty tiocsti="+pts+" escape="+pts+" setsid-tty="+pts)
			cmd.Stdin = slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			out, err := cmd.Output()
			t.Logf("uid %d, %s:\n%s", os.Getuid(), pts, out)
			if err != nil || !strings.Contains(string(out), "REFUSED tty") {
				t.Fatalf("the sidecar on the terminal: %v\n%s", err, out)
			}
			for _, what := range []string{"tiocsti", "escape", "setsid-tty"} {
				if strings.Contains(string(out), "ALLOWED "+what) {
					t.Errorf("ALLOWED %s", what)
				}
			}
			if typed := readNow(slave); typed != "" {
				t.Errorf("the agent typed into the person's terminal: %q", typed)
			}
			if shown := readNow(master); strings.Contains(shown, "PWNED") || strings.Contains(shown, "\x1b]") {
				t.Errorf("the agent wrote onto the person's terminal: %q", shown)
			}
		})
	})
}

// Capabilities: a root agent has the file ones and low ports only (CAP_CHOWN,
// CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID, CAP_NET_BIND_SERVICE), and
// exec of a root program gives none back; an agent of any other user has none. In a world and
// without.
func TestChannelCapabilities(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			w := newConfinedWorld(t)
			// Twice: the agent's own shell, then a program it runs (root's exec grants nothing more).
			_, res := drain(t, start(t, w.spec("a", `grep -E '^Cap(Prm|Eff|Amb)' /proc/self/status; sh -c "grep -E '^Cap(Prm|Eff)' /proc/self/status"`), ""), nil)
			want := "0000000000000000"
			if os.Getuid() == 0 {
				want = fmt.Sprintf("%016x", 1<<unix.CAP_CHOWN|1<<unix.CAP_DAC_OVERRIDE|1<<unix.CAP_DAC_READ_SEARCH|1<<unix.CAP_FOWNER|1<<unix.CAP_FSETID|1<<unix.CAP_NET_BIND_SERVICE)
			}
			lines := strings.Split(strings.TrimSpace(res.Reply), "\n")
			if len(lines) != 5 {
				t.Fatalf("reply %q", res.Reply)
			}
			for _, l := range lines {
				if f := strings.Fields(l); len(f) != 2 || f[1] != want && !(f[0] == "CapAmb:" && os.Getuid() != 0) {
					t.Errorf("%s, want %s (uid %d)", l, want, os.Getuid())
				}
			}
		})
	})
}
