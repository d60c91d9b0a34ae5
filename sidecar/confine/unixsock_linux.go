package confine

import (
	"fmt"
	goruntime "runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Unix-socket filter: a seccomp-BPF program, installed on the restricted thread after its
// Landlock ruleset (no TSYNC: that thread only, and so only the agent it forks), that makes
// socket(AF_UNIX, …) fail with EACCES. Landlock before ABI 9 cannot name pathname sockets,
// and a seccomp filter cannot see the path connect() is given, so Unix sockets are refused as a
// whole: an agent can then reach no socket file (the Docker socket, an ssh agent, D-Bus) and
// serve none. socketpair stays allowed (the CLIs' own pipes to their children), except with
// SOCK_DGRAM: a datagram pair's socket may connect() or sendto() any pathname datagram socket.
//
// The ways around it are closed too: the 32-bit syscall ABI of a 64-bit kernel (socketcall
// and its own socket numbers), x32's numbers, and io_uring, whose IORING_OP_SOCKET makes a
// socket without the socket system call.

// seccomp_data's fields (linux/seccomp.h): nr, arch, instruction pointer, then the six
// arguments, 64 bits each. On a little-endian machine an argument's low 32 bits, all that
// socket's int domain and type are, come first.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
)

// x32Bit marks the x32 ABI's system call numbers on x86_64.
const x32Bit = 0x40000000

// sysABI is one system-call ABI the filter knows: its AUDIT_ARCH value and numbers.
type sysABI struct {
	audit                            uint32
	socket, socketpair, ioUringSetup uint32
	socketcall                       uint32 // 0: the ABI has none
	x32                              bool   // x86_64: numbers with x32Bit set are x32's
}

// unixFilterABIs are, per GOARCH, the ABIs a process of that kernel can call: the native one
// and the 32-bit compat one. A syscall of any other ABI kills the process.
var unixFilterABIs = map[string][]sysABI{
	"amd64": {
		{audit: unix.AUDIT_ARCH_X86_64, socket: 41, socketpair: 53, ioUringSetup: 425, x32: true},
		{audit: unix.AUDIT_ARCH_I386, socket: 359, socketpair: 360, ioUringSetup: 425, socketcall: 102},
	},
	"arm64": {
		{audit: unix.AUDIT_ARCH_AARCH64, socket: 198, socketpair: 199, ioUringSetup: 425},
		// ARM EABI has no socketcall; 102 is refused anyway, in case a kernel wires it.
		{audit: unix.AUDIT_ARCH_ARM, socket: 281, socketpair: 288, ioUringSetup: 425, socketcall: 102},
	},
}

// UnixSocketFilterSupported reports whether the filter can be installed on this
// architecture; where it cannot, agents keep Unix sockets and the runtime warns.
func UnixSocketFilterSupported() bool { return unixFilterABIs[goruntime.GOARCH] != nil }

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jeq(k uint32, jt, jf int) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: uint8(jt), Jf: uint8(jf)}
}

func ret(v uint32) unix.SockFilter { return stmt(unix.BPF_RET|unix.BPF_K, v) }

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA }

var (
	allow  = ret(unix.SECCOMP_RET_ALLOW)
	eacces = ret(errno(unix.EACCES))
	enosys = ret(errno(unix.ENOSYS))
)

// unixSocketFilter assembles the program for the given ABIs: per ABI, a block that is
// skipped when the call is of another ABI; after the last, a call of an unknown ABI kills.
func unixSocketFilter(abis []sysABI) []unix.SockFilter {
	var prog []unix.SockFilter
	for _, a := range abis {
		body := abiBlock(a)
		prog = append(prog,
			stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch), // A = arch
			jeq(a.audit, 0, len(body)),                         // another ABI: skip this block
		)
		prog = append(prog, body...)
	}
	return append(prog, ret(unix.SECCOMP_RET_KILL_PROCESS)) // an ABI the filter does not know
}

// abiBlock checks the call number of one ABI; each rule is "nr == N: its body", where a body
// ends in a return, so a call matches one rule at most. Anything else is allowed.
func abiBlock(a sysABI) []unix.SockFilter {
	b := []unix.SockFilter{stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr)} // A = nr
	if a.x32 {
		b = append(b,
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: x32Bit, Jt: 0, Jf: 1}, // x32's numbers:
			enosys, // as on a kernel built without x32
		)
	}
	rule := func(nr uint32, body ...unix.SockFilter) {
		b = append(b, jeq(nr, 0, len(body))) // not this call: skip its body
		b = append(b, body...)
	}
	rule(a.socket,
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArg0), // A = domain
		jeq(unix.AF_UNIX, 0, 1),                            // AF_UNIX (AF_LOCAL):
		eacces,                                             //   refused
		allow)                                              // any other family
	rule(a.socketpair,
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArg1), // A = type, with its flags
		stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, 0xf),    // A &= SOCK_TYPE_MASK
		jeq(unix.SOCK_DGRAM, 0, 1),                         // a datagram pair could reach any socket file:
		eacces,                                             //   refused
		allow)                                              // stream and seqpacket pairs
	rule(a.ioUringSetup, enosys) // IORING_OP_SOCKET bypasses socket(); as without io_uring
	if a.socketcall != 0 {
		rule(a.socketcall, eacces) // its arguments are in memory, out of the filter's sight
	}
	return append(b, allow)
}

// installUnixSocketFilter installs the filter on the calling thread (no TSYNC), which must
// have set no_new_privs. It does nothing where the filter is not supported.
func installUnixSocketFilter() error {
	abis := unixFilterABIs[goruntime.GOARCH]
	if abis == nil {
		return nil
	}
	f := unixSocketFilter(abis)
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", e)
	}
	goruntime.KeepAlive(f)
	return nil
}
