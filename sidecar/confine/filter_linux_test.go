package confine

import (
	"encoding/binary"
	"errors"
	goruntime "runtime"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// threadCalls are the results of calls the filter decides, made on one thread.
type threadCalls struct {
	unixSocket, inetSocket, streamPair, dgramPair, rawPair, ioUring, keyctl, tiocsti, newUser, packet error
}

func makeCalls() threadCalls {
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
	_, kerr := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, false)
	// TIOCSTI on a pseudo-terminal of the thread's own: the request is refused before the
	// kernel sees which terminal it is.
	var sti error = unix.ENOENT
	if m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
		c := byte('x')
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		sti = e
		if e == 0 {
			sti = nil
		}
		unix.Close(m)
	}
	_, _, ue := unix.Syscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
	var newUser error
	if ue != 0 {
		newUser = ue
	}
	return threadCalls{
		unixSocket: try(unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)),
		inetSocket: try(unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)),
		streamPair: pair(unix.SOCK_STREAM),
		dgramPair:  pair(unix.SOCK_DGRAM | unix.SOCK_NONBLOCK),
		rawPair:    pair(unix.SOCK_RAW), // the kernel makes a datagram pair of it
		ioUring:    uring,
		keyctl:     kerr,
		tiocsti:    sti,
		newUser:    newUser,
		packet:     try(unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)),
	}
}

// callsOnRestrictedThread restricts a fresh thread with p and makes the calls there. The
// unshare, when allowed, happens on a thread that ends with the goroutine.
func callsOnRestrictedThread(t *testing.T, p Policy) threadCalls {
	t.Helper()
	type result struct {
		c   threadCalls
		err error
	}
	done := make(chan result)
	go func() {
		goruntime.LockOSThread() // never unlocked: the restricted thread ends here
		if _, err := p.RestrictThread(); err != nil {
			done <- result{err: err}
			return
		}
		done <- result{c: makeCalls()}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.c
}

// On a restricted thread: no Unix socket, no datagram pair (asked for as datagram or as
// SOCK_RAW, which the kernel turns into datagram), no io_uring, no keyring, no TIOCSTI, no
// new user namespace, no packet socket; stream pairs and TCP work, and the rest of the
// process is not filtered.
func TestFilterOnAThread(t *testing.T) {
	if !Probe().Available() {
		t.Skip("no Landlock here")
	}
	if !FilterSupported() {
		t.Skipf("no filter on %s", goruntime.GOARCH)
	}
	c := callsOnRestrictedThread(t, Policy{Rules: []Rule{{Device, "/dev/ptmx"}}})
	for name, got := range map[string]struct {
		err  error
		want unix.Errno
	}{
		"socket(AF_UNIX)":        {c.unixSocket, unix.EACCES},
		"socketpair(SOCK_DGRAM)": {c.dgramPair, unix.EACCES},
		"socketpair(SOCK_RAW)":   {c.rawPair, unix.EACCES},
		"io_uring_setup":         {c.ioUring, unix.ENOSYS},
		"keyctl":                 {c.keyctl, unix.EPERM},
		"ioctl(TIOCSTI)":         {c.tiocsti, unix.ENOTTY},
		"unshare(CLONE_NEWUSER)": {c.newUser, unix.EPERM},
		"socket(AF_PACKET)":      {c.packet, unix.EAFNOSUPPORT},
	} {
		if !errors.Is(got.err, got.want) {
			t.Errorf("filtered %s: %v, want %v", name, got.err, got.want)
		}
	}
	if c.inetSocket != nil || c.streamPair != nil {
		t.Errorf("filtered: socket(AF_INET) %v, socketpair(SOCK_STREAM) %v; want both allowed", c.inetSocket, c.streamPair)
	}
	if c := makeCalls(); c.unixSocket != nil || c.dgramPair != nil || c.keyctl == unix.EPERM {
		t.Errorf("the rest of the process is filtered too: socket(AF_UNIX) %v, socketpair(SOCK_DGRAM) %v, keyctl %v", c.unixSocket, c.dgramPair, c.keyctl)
	}
}

// A runtime.unixSockets grant allows Unix sockets and datagram pairs; the rest of the filter
// stays.
func TestFilterGranted(t *testing.T) {
	if !Probe().Available() || !FilterSupported() {
		t.Skip("no Landlock or no filter here")
	}
	c := callsOnRestrictedThread(t, Policy{AllowUnixSockets: true})
	if c.unixSocket != nil || c.dgramPair != nil {
		t.Errorf("granted: socket(AF_UNIX) %v, socketpair(SOCK_DGRAM) %v; want both allowed", c.unixSocket, c.dgramPair)
	}
	if !errors.Is(c.ioUring, unix.ENOSYS) || !errors.Is(c.keyctl, unix.EPERM) {
		t.Errorf("granted: io_uring %v, keyctl %v; want them refused still", c.ioUring, c.keyctl)
	}
}

// seccompData is a struct seccomp_data for the BPF VM, which loads words big-endian: each
// 32-bit field is written so, at the offset the kernel's native load reads it from. An
// argument's high half (which the filter must never need) is filled with ones.
func seccompData(arch, nr uint32, args ...uint32) []byte {
	wide := make([]uint64, 6)
	for i := range wide {
		wide[i] = 0xffffffff << 32
		if i < len(args) {
			wide[i] |= uint64(args[i])
		}
	}
	return seccompData64(arch, nr, wide...)
}

// seccompData64 is seccompData with whole 64-bit arguments (a NULL pointer is all zeros).
func seccompData64(arch, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[offArg0+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[offArg0+8*i+4:], uint32(a>>32))
	}
	return b
}

// The program of every architecture, run in x/net/bpf's VM, with and without its options:
// the ABIs this machine cannot call get the same decisions.
func TestFilterProgram(t *testing.T) {
	const (
		allowed = unix.SECCOMP_RET_ALLOW
		kill    = unix.SECCOMP_RET_KILL_PROCESS
	)
	eacces, enosys, eperm, enotty, eafno := errno(unix.EACCES), errno(unix.ENOSYS), errno(unix.EPERM), errno(unix.ENOTTY), errno(unix.EAFNOSUPPORT)
	einval := errno(unix.EINVAL)
	type call struct {
		arch, nr uint32
		args     []uint32
		want     uint32
	}
	const dgram, stream, raw = unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, unix.SOCK_STREAM | unix.SOCK_NONBLOCK, unix.SOCK_RAW
	amd, arm := uint32(unix.AUDIT_ARCH_X86_64), uint32(unix.AUDIT_ARCH_AARCH64)
	type program struct {
		arch  string
		opts  FilterOptions
		calls []call
	}
	cases := []program{
		{"amd64", FilterOptions{}, []call{
			{amd, 41, []uint32{unix.AF_UNIX, stream}, eacces},
			{amd, 41, []uint32{unix.AF_INET6, stream}, allowed},
			{amd, 41, []uint32{unix.AF_INET, dgram}, allowed},
			{amd, 41, []uint32{unix.AF_INET, raw}, eacces},
			{amd, 41, []uint32{unix.AF_NETLINK, raw, unix.NETLINK_ROUTE}, allowed},
			{amd, 41, []uint32{unix.AF_NETLINK, raw, unix.NETLINK_AUDIT}, eacces},
			{amd, 41, []uint32{unix.AF_PACKET, raw}, eafno},
			{amd, 41, []uint32{unix.AF_ALG, unix.SOCK_SEQPACKET}, eafno},
			{amd, 53, []uint32{unix.AF_UNIX, stream}, allowed},
			{amd, 53, []uint32{unix.AF_UNIX, unix.SOCK_SEQPACKET}, allowed},
			{amd, 53, []uint32{unix.AF_UNIX, dgram}, eacces},
			{amd, 53, []uint32{unix.AF_UNIX, raw}, eacces}, // the kernel's datagram pair
			{amd, 53, []uint32{unix.AF_UNIX, 7}, eacces},
			{amd, 16, []uint32{0, unix.TCGETS}, allowed},
			{amd, 16, []uint32{0, unix.TIOCSTI}, enotty},
			{amd, 16, []uint32{0, unix.TIOCLINUX}, enotty},
			{amd, 16, []uint32{0, unix.TIOCCONS}, enotty},
			{amd, 16, []uint32{0, unix.FICLONE}, allowed},
			{amd, 425, nil, enosys},
			{amd, 426, nil, enosys},
			{amd, 250, nil, eperm}, // keyctl
			{amd, 304, nil, eperm}, // open_by_handle_at
			{amd, 272, []uint32{unix.CLONE_NEWUSER}, eperm},
			{amd, 272, []uint32{unix.CLONE_NEWNS}, allowed}, // Landlock refuses mounts
			{amd, 56, []uint32{unix.CLONE_NEWUSER | uint32(unix.SIGCHLD)}, eperm},
			{amd, 56, []uint32{unix.CLONE_VM | unix.CLONE_VFORK | uint32(unix.SIGCHLD)}, allowed},
			{amd, 435, nil, enosys},         // clone3
			{amd, 29, nil, eacces},          // shmget
			{amd, 240, nil, eacces},         // mq_open
			{amd, 42, []uint32{3}, allowed}, // connect, on a socket it may have
			{amd, 41, []uint32{unix.AF_INET, stream, unix.IPPROTO_MPTCP}, allowed},
			{amd, 41, []uint32{unix.AF_INET, dgram, unix.IPPROTO_ICMP}, allowed},
			{amd, 302, []uint32{0, unix.RLIMIT_NOFILE, 0x1000}, allowed}, // prlimit64: its own
			{amd, 302, []uint32{4242, unix.RLIMIT_CPU, 0}, eperm},        // another's (the pointer's high half is not 0)
			{amd, 141, []uint32{unix.PRIO_PROCESS, 0, 19}, allowed},      // setpriority
			{amd, 141, []uint32{unix.PRIO_PGRP, 0, 19}, allowed},
			{amd, 141, []uint32{unix.PRIO_PROCESS, 4242, 19}, eperm},
			{amd, 141, []uint32{unix.PRIO_PGRP, 4242, 19}, eperm},
			{amd, 141, []uint32{unix.PRIO_USER, 0, 19}, eperm}, // every process of its user
			{amd, 251, []uint32{ioprioWhoProcess, 0}, allowed}, // ioprio_set
			{amd, 251, []uint32{ioprioWhoPgrp, 0}, allowed},
			{amd, 251, []uint32{ioprioWhoProcess, 4242}, eperm},
			{amd, 251, []uint32{3, 0}, eperm}, // IOPRIO_WHO_USER
			{amd, 203, []uint32{0}, allowed},  // sched_setaffinity
			{amd, 203, []uint32{4242}, eperm},
			{amd, 144, []uint32{4242}, eperm},   // sched_setscheduler
			{amd, 142, []uint32{4242}, eperm},   // sched_setparam
			{amd, 314, []uint32{4242}, eperm},   // sched_setattr
			{amd, 204, []uint32{4242}, allowed}, // sched_getaffinity: reading is not changing
			{amd, 41 | x32Bit, []uint32{unix.AF_INET, stream}, enosys},
			{amd, 0 | x32Bit, nil, enosys},
			{unix.AUDIT_ARCH_I386, 102, []uint32{1}, enosys}, // socketcall
			{unix.AUDIT_ARCH_I386, 4, nil, enosys},           // write: the whole compat ABI
			{arm, 198, []uint32{unix.AF_UNIX, stream}, kill},
		}},
		{"amd64", FilterOptions{UnixSockets: true, PrivateIPC: true}, []call{
			{amd, 41, []uint32{unix.AF_UNIX, stream}, allowed},
			{amd, 41, []uint32{unix.AF_UNIX, raw}, eacces},
			{amd, 53, []uint32{unix.AF_UNIX, dgram}, allowed},
			{amd, 64, []uint32{0, maxSemSet}, allowed}, // semget
			{amd, 64, []uint32{0, maxSemSet + 1}, einval},
			{amd, 64, []uint32{0, 0xffffffff}, einval}, // -1
			{amd, 68, nil, eacces},                     // msgget
			{amd, 69, nil, allowed},                    // msgsnd: to no queue
			{amd, 30, nil, allowed},                    // shmat
			{amd, 240, nil, allowed},
			{amd, 250, nil, eperm},
		}},
		{"amd64", FilterOptions{TCPOnly: true}, []call{
			{amd, 41, []uint32{unix.AF_INET, stream, 0}, allowed},
			{amd, 41, []uint32{unix.AF_INET6, stream, unix.IPPROTO_TCP}, allowed},
			{amd, 41, []uint32{unix.AF_INET, stream, unix.IPPROTO_MPTCP}, eacces}, // Landlock sees TCP only
			{amd, 41, []uint32{unix.AF_INET, stream, unix.IPPROTO_SCTP}, eacces},
			{amd, 41, []uint32{unix.AF_INET, dgram, 0}, eacces}, // UDP
			{amd, 41, []uint32{unix.AF_INET6, dgram, unix.IPPROTO_UDP}, eacces},
			{amd, 41, []uint32{unix.AF_INET, dgram, unix.IPPROTO_ICMP}, eacces},
			{amd, 41, []uint32{unix.AF_INET, raw, unix.IPPROTO_TCP}, eacces},
			{amd, 41, []uint32{unix.AF_NETLINK, raw, unix.NETLINK_ROUTE}, allowed},
			{amd, 53, []uint32{unix.AF_UNIX, stream}, allowed},
		}},
		{"arm64", FilterOptions{}, []call{
			{arm, 198, []uint32{unix.AF_UNIX, stream}, eacces},
			{arm, 198, []uint32{unix.AF_INET, stream}, allowed},
			{arm, 199, []uint32{unix.AF_UNIX, dgram}, eacces},
			{arm, 199, []uint32{unix.AF_UNIX, stream}, allowed},
			{arm, 29, []uint32{0, unix.TIOCSTI}, enotty},
			{arm, 29, []uint32{0, unix.TIOCGWINSZ}, allowed},
			{arm, 425, nil, enosys},
			{arm, 219, nil, eperm},
			{arm, 97, []uint32{unix.CLONE_NEWUSER}, eperm},
			{arm, 261, []uint32{4242, unix.RLIMIT_CPU, 0}, eperm}, // prlimit64
			{arm, 261, []uint32{0, unix.RLIMIT_CPU, 0}, allowed},
			{arm, 140, []uint32{unix.PRIO_USER, 0}, eperm},     // setpriority
			{arm, 30, []uint32{ioprioWhoProcess, 4242}, eperm}, // ioprio_set
			{arm, 122, []uint32{4242}, eperm},                  // sched_setaffinity
			{arm, 274, []uint32{0}, allowed},                   // sched_setattr
			{arm, 194, nil, eacces},
			{arm, 186, nil, eacces},
			{arm, 41 | x32Bit, nil, allowed}, // no x32 here
			{unix.AUDIT_ARCH_ARM, 281, []uint32{unix.AF_UNIX, stream}, enosys},
			{amd, 41, []uint32{unix.AF_UNIX, stream}, kill},
		}},
	}
	// prlimit64 may read another process's limits: its new-limits pointer is NULL.
	for _, pc := range []struct {
		arch   string
		nr     uint32
		audit  uint32
		newLim uint64
		want   uint32
	}{{"amd64", 302, amd, 0, allowed}, {"amd64", 302, amd, 0x7fff00000000, eperm}, {"amd64", 302, amd, 0x1000, eperm}, {"arm64", 261, arm, 0, allowed}} {
		vm := filterVM(t, pc.arch, FilterOptions{})
		if got, err := vm.Run(seccompData64(pc.audit, pc.nr, 4242, unix.RLIMIT_CPU, pc.newLim, 0x1000)); err != nil || uint32(got) != pc.want {
			t.Errorf("%s prlimit64(4242, RLIMIT_CPU, %#x, old) = %#x %v, want %#x", pc.arch, pc.newLim, uint32(got), err, pc.want)
		}
	}
	// shmget's size is 64 bits: all of it is checked.
	for _, sc := range []struct {
		arch  string
		nr    uint32
		audit uint32
		size  uint64
		want  uint32
	}{{"amd64", 29, amd, maxShmSegment, allowed}, {"amd64", 29, amd, maxShmSegment + 1, einval}, {"amd64", 29, amd, 1 << 30, einval},
		{"amd64", 29, amd, 1<<32 | 4096, einval}, {"arm64", 194, arm, 4096, allowed}, {"arm64", 194, arm, 1 << 30, einval}} {
		vm := filterVM(t, sc.arch, FilterOptions{PrivateIPC: true})
		if got, err := vm.Run(seccompData64(sc.audit, sc.nr, 0, sc.size, 0o600)); err != nil || uint32(got) != sc.want {
			t.Errorf("%s shmget(0, %#x, 0600) = %#x %v, want %#x", sc.arch, sc.size, uint32(got), err, sc.want)
		}
	}
	for _, pc := range cases {
		vm := filterVM(t, pc.arch, pc.opts)
		for _, c := range pc.calls {
			got, err := vm.Run(seccompData(c.arch, c.nr, c.args...))
			if err != nil || uint32(got) != c.want {
				t.Errorf("%s %+v: arch %#x nr %#x %#x = %#x %v, want %#x", pc.arch, pc.opts, c.arch, c.nr, c.args, uint32(got), err, c.want)
			}
		}
	}
}

// filterVM is the filter of arch with opts in x/net/bpf's VM.
func filterVM(t *testing.T, arch string, opts FilterOptions) *bpf.VM {
	t.Helper()
	var prog []bpf.Instruction
	for _, ins := range filterProgram(filterABIs[arch], opts) {
		prog = append(prog, bpf.RawInstruction{Op: ins.Code, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}.Disassemble())
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatalf("%s: %v", arch, err)
	}
	return vm
}

// The filter's numbers for this machine are the kernel's (x/sys/unix knows them).
func TestFilterNumbersAreTheKernels(t *testing.T) {
	abi, ok := filterABIs[goruntime.GOARCH]
	if !ok {
		t.Skip("no filter here")
	}
	n := abi.nr
	for name, pair := range map[string][2]uint32{
		"socket": {n.socket, unix.SYS_SOCKET}, "socketpair": {n.socketpair, unix.SYS_SOCKETPAIR}, "ioctl": {n.ioctl, unix.SYS_IOCTL},
		"clone": {n.clone, unix.SYS_CLONE}, "clone3": {n.clone3, unix.SYS_CLONE3}, "unshare": {n.unshare, unix.SYS_UNSHARE},
		"io_uring_setup": {n.ioUring[0], unix.SYS_IO_URING_SETUP}, "keyctl": {n.keyring[2], unix.SYS_KEYCTL},
		"open_by_handle_at": {n.byHandle[1], unix.SYS_OPEN_BY_HANDLE_AT}, "bpf": {n.other[0], unix.SYS_BPF},
		"shmget": {n.ipc[slices.Index(n.ipc, unix.SYS_SHMGET)], unix.SYS_SHMGET}, "mq_open": {n.ipc[slices.Index(n.ipc, unix.SYS_MQ_OPEN)], unix.SYS_MQ_OPEN},
		"userfaultfd": {n.other[1], unix.SYS_USERFAULTFD}, "add_key": {n.keyring[0], unix.SYS_ADD_KEY},
		"prlimit64": {n.prlimit, unix.SYS_PRLIMIT64}, "setpriority": {n.setpriority, unix.SYS_SETPRIORITY},
		"ioprio_set": {n.ioprioSet, unix.SYS_IOPRIO_SET}, "sched_setparam": {n.schedSet[0], unix.SYS_SCHED_SETPARAM},
		"sched_setscheduler": {n.schedSet[1], unix.SYS_SCHED_SETSCHEDULER}, "sched_setaffinity": {n.schedSet[2], unix.SYS_SCHED_SETAFFINITY},
		"sched_setattr":  {n.schedSet[3], unix.SYS_SCHED_SETATTR},
		"shmget (alone)": {n.shmget, unix.SYS_SHMGET}, "semget": {n.semget, unix.SYS_SEMGET}, "msgget": {n.msgget, unix.SYS_MSGGET},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: the filter has %d, the kernel %d", name, pair[0], pair[1])
		}
	}
}
