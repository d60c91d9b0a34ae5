package confine

import (
	"encoding/binary"
	"errors"
	goruntime "runtime"
	"testing"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// socketCalls are the results of the socket calls the filter decides, made on one thread.
type socketCalls struct {
	unixSocket, inetSocket, streamPair, dgramPair, ioUring error
}

func makeSocketCalls() socketCalls {
	try := func(fd int, err error) error {
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	pair := func(typ int) error {
		fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	}
	var params [120]byte // struct io_uring_params, zeroed
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	var uring error
	if e != 0 {
		uring = e
	} else {
		unix.Close(int(fd))
	}
	return socketCalls{
		unixSocket: try(unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)),
		inetSocket: try(unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)),
		streamPair: pair(unix.SOCK_STREAM),
		dgramPair:  pair(unix.SOCK_DGRAM | unix.SOCK_NONBLOCK),
		ioUring:    uring,
	}
}

// callsOnRestrictedThread restricts a fresh thread with p and makes the calls there.
func callsOnRestrictedThread(t *testing.T, p Policy) socketCalls {
	t.Helper()
	type result struct {
		c   socketCalls
		err error
	}
	done := make(chan result)
	go func() {
		goruntime.LockOSThread() // never unlocked: the restricted thread ends here
		if _, err := p.RestrictThread(); err != nil {
			done <- result{err: err}
			return
		}
		done <- result{c: makeSocketCalls()}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.c
}

// A restricted thread cannot make a Unix socket (nor a datagram pair, nor use io_uring,
// which could make one); stream pairs and other families still work, and the rest of the
// process keeps Unix sockets.
func TestUnixSocketFilter(t *testing.T) {
	if !Probe().Available() {
		t.Skip("no Landlock here")
	}
	if !UnixSocketFilterSupported() {
		t.Skipf("no Unix-socket filter on %s", goruntime.GOARCH)
	}
	c := callsOnRestrictedThread(t, Policy{})
	if !errors.Is(c.unixSocket, unix.EACCES) || !errors.Is(c.dgramPair, unix.EACCES) || !errors.Is(c.ioUring, unix.ENOSYS) {
		t.Errorf("filtered: socket(AF_UNIX) %v, socketpair(SOCK_DGRAM) %v, io_uring_setup %v; want EACCES, EACCES, ENOSYS",
			c.unixSocket, c.dgramPair, c.ioUring)
	}
	if c.inetSocket != nil || c.streamPair != nil {
		t.Errorf("filtered: socket(AF_INET) %v, socketpair(SOCK_STREAM) %v; want both allowed", c.inetSocket, c.streamPair)
	}
	if c := makeSocketCalls(); c.unixSocket != nil || c.dgramPair != nil {
		t.Errorf("the rest of the process is filtered too: socket(AF_UNIX) %v, socketpair(SOCK_DGRAM) %v", c.unixSocket, c.dgramPair)
	}
}

// With AllowUnixSockets (a runtime.unixSockets grant) no filter is installed.
func TestUnixSocketFilterGranted(t *testing.T) {
	if !Probe().Available() {
		t.Skip("no Landlock here")
	}
	c := callsOnRestrictedThread(t, Policy{AllowUnixSockets: true})
	if c.unixSocket != nil || c.dgramPair != nil {
		t.Errorf("granted: socket(AF_UNIX) %v, socketpair(SOCK_DGRAM) %v; want both allowed", c.unixSocket, c.dgramPair)
	}
}

// seccompData is a struct seccomp_data for the BPF VM, which loads words big-endian: each
// 32-bit field is written so, at the offset the kernel's native load reads it from.
func seccompData(arch, nr, arg0, arg1 uint32) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	binary.BigEndian.PutUint32(b[offArg0:], arg0)
	binary.BigEndian.PutUint32(b[offArg1:], arg1)
	return b
}

// The program of every architecture, run in x/net/bpf's VM: the ABIs this machine cannot
// call (i386 and x32 on x86_64, arm64 and 32-bit ARM) get the same decisions.
func TestUnixSocketFilterProgram(t *testing.T) {
	const (
		allowed = unix.SECCOMP_RET_ALLOW
		kill    = unix.SECCOMP_RET_KILL_PROCESS
	)
	eaccesRet, enosysRet := errno(unix.EACCES), errno(unix.ENOSYS)
	type call struct {
		arch, nr, arg0, arg1 uint32
		want                 uint32
	}
	const dgram, stream = unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, unix.SOCK_STREAM | unix.SOCK_NONBLOCK
	cases := map[string][]call{
		"amd64": {
			{unix.AUDIT_ARCH_X86_64, 41, unix.AF_UNIX, stream, eaccesRet},
			{unix.AUDIT_ARCH_X86_64, 41, unix.AF_INET6, stream, allowed},
			{unix.AUDIT_ARCH_X86_64, 53, unix.AF_UNIX, stream, allowed},
			{unix.AUDIT_ARCH_X86_64, 53, unix.AF_UNIX, dgram, eaccesRet},
			{unix.AUDIT_ARCH_X86_64, 425, 0, 0, enosysRet},
			{unix.AUDIT_ARCH_X86_64, 42, 3, 0, allowed},            // connect, on a socket it may have
			{unix.AUDIT_ARCH_X86_64, 41 | x32Bit, 0, 0, enosysRet}, // x32's socket
			{unix.AUDIT_ARCH_X86_64, 0 | x32Bit, 0, 0, enosysRet},  // any x32 call
			{unix.AUDIT_ARCH_I386, 102, 1, 0, eaccesRet},           // socketcall(SYS_SOCKET, …)
			{unix.AUDIT_ARCH_I386, 359, unix.AF_UNIX, stream, eaccesRet},
			{unix.AUDIT_ARCH_I386, 359, unix.AF_INET, stream, allowed},
			{unix.AUDIT_ARCH_I386, 360, unix.AF_UNIX, dgram, eaccesRet},
			{unix.AUDIT_ARCH_I386, 41, unix.AF_UNIX, stream, allowed}, // i386's 41 is dup
			{unix.AUDIT_ARCH_I386, 425, 0, 0, enosysRet},
			{unix.AUDIT_ARCH_AARCH64, 198, unix.AF_UNIX, stream, kill},
		},
		"arm64": {
			{unix.AUDIT_ARCH_AARCH64, 198, unix.AF_UNIX, stream, eaccesRet},
			{unix.AUDIT_ARCH_AARCH64, 198, unix.AF_INET, stream, allowed},
			{unix.AUDIT_ARCH_AARCH64, 199, unix.AF_UNIX, dgram, eaccesRet},
			{unix.AUDIT_ARCH_AARCH64, 199, unix.AF_UNIX, stream, allowed},
			{unix.AUDIT_ARCH_AARCH64, 425, 0, 0, enosysRet},
			{unix.AUDIT_ARCH_AARCH64, 41 | x32Bit, 0, 0, allowed}, // no x32 here
			{unix.AUDIT_ARCH_ARM, 281, unix.AF_UNIX, stream, eaccesRet},
			{unix.AUDIT_ARCH_ARM, 288, unix.AF_UNIX, dgram, eaccesRet},
			{unix.AUDIT_ARCH_ARM, 102, 1, 0, eaccesRet},
			{unix.AUDIT_ARCH_X86_64, 41, unix.AF_UNIX, stream, kill},
		},
	}
	for arch, calls := range cases {
		var prog []bpf.Instruction
		for _, ins := range unixSocketFilter(unixFilterABIs[arch]) {
			prog = append(prog, bpf.RawInstruction{Op: ins.Code, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}.Disassemble())
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		for _, c := range calls {
			got, err := vm.Run(seccompData(c.arch, c.nr, c.arg0, c.arg1))
			if err != nil || uint32(got) != c.want {
				t.Errorf("%s: arch %#x nr %#x (%d, %#x) = %#x %v, want %#x", arch, c.arch, c.nr, c.arg0, c.arg1, uint32(got), err, c.want)
			}
		}
	}
}
