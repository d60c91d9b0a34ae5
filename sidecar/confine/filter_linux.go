package confine

import (
	"fmt"
	goruntime "runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system-call filter: a seccomp-BPF program installed on the restricted thread after its
// Landlock ruleset (no TSYNC: that thread only, and so only the agent it forks). Landlock rules
// files, TCP ports and scopes; the filter rules what Landlock cannot see, by list:
//
//   - the system-call ABI: the machine's own only. Calls of the 32-bit compat ABI (int 0x80,
//     i386 or 32-bit ARM programs) and x32's numbers fail with ENOSYS, as on a kernel built
//     without them; a call of an ABI the filter does not know ends the process.
//   - socket(): the families and types allowed, checked as the kernel reads them (the low 32
//     bits, the type without its flags): TCP and UDP over IPv4 and IPv6, routing netlink
//     (getifaddrs, getaddrinfo's address checks), and Unix sockets only where the agent has
//     a world of its own or a grant (FilterOptions). Every other family is EAFNOSUPPORT.
//     Where Landlock's TCP rules decide the agent's network (FilterOptions.TCPOnly), IPv4
//     and IPv6 sockets are TCP only, by type and protocol: the rules see nothing else, and
//     UDP, ICMP or MPTCP (which reaches a plain TCP server too) would pass them.
//   - the calls that change another process by its id without tracing or signalling it,
//     which Landlock does not see: resource limits (prlimit64: a CPU-time limit of a second
//     kills the sidecar), priority (setpriority, ioprio_set, sched_setscheduler,
//     sched_setparam, sched_setattr) and CPUs (sched_setaffinity). Each may name the calling
//     process or thread (0) only, and its group for the two that take one; prlimit64 may
//     still read another process's limits. EPERM, the kernel's own answer for a process
//     one may not change.
//   - socketpair(): stream and seqpacket pairs; datagram pairs only where Unix sockets are
//     allowed (a datagram socket may sendto() any socket file). The kernel turns an unknown
//     AF_UNIX type (SOCK_RAW) into a datagram one: types are allowed by list, so it is refused.
//   - ioctl(): the requests of the list below (terminal settings of the agent's own pseudo-
//     terminals, non-blocking and close-on-exec flags, file cloning and extents, interface
//     queries); any other is ENOTTY, the answer of a file that does not know it. TIOCSTI
//     (typing into a terminal), TIOCLINUX and TIOCCONS are not on it.
//   - io_uring (its operations make sockets and open files without these calls): ENOSYS.
//   - the kernel keyrings (keyctl, add_key, request_key): the user keyring is shared by every
//     process of the user. EPERM.
//   - open_by_handle_at and name_to_handle_at (a file by handle, not by path): EPERM.
//   - new user namespaces (clone and unshare with CLONE_NEWUSER: EPERM; clone3, whose
//     arguments the filter cannot read: ENOSYS, and the C library falls back to clone).
//   - System V IPC and POSIX message queues, shared by every process of the user, unless the
//     agent has an IPC namespace of its own (FilterOptions.PrivateIPC): EACCES. In one of its
//     own, System V segments and semaphore sets of a bounded size only (maxShmSegment,
//     maxSemSet: EINVAL, the kernel's answer past its own limits), and no message queues.
//   - bpf and userfaultfd: EPERM.
//
// Anything else is allowed: the filter narrows what Landlock leaves open, it does not replace it.

// seccomp_data's fields (linux/seccomp.h): nr, arch, instruction pointer, then the six
// arguments, 64 bits each. On a little-endian machine an argument's low 32 bits come first.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
	offArg2 = 32
)

// x32Bit marks the x32 ABI's system call numbers on x86_64.
const x32Bit = 0x40000000

// sysABI is the native system-call ABI of one architecture: its AUDIT_ARCH value, its
// numbers of the calls the filter decides, and the compat ABI its kernel also runs.
type sysABI struct {
	audit, compat uint32
	x32           bool // x86_64: numbers with x32Bit set are x32's
	nr            sysNumbers
}

type sysNumbers struct {
	socket, socketpair, ioctl, clone, clone3, unshare uint32
	ioUring                                           []uint32
	keyring, byHandle, ipc, other                     []uint32
	shmget, semget, msgget                            uint32
	// prlimit64, setpriority and ioprio_set; schedSet: sched_setparam, sched_setscheduler,
	// sched_setaffinity, sched_setattr (calls whose first argument is the process they change)
	prlimit, setpriority, ioprioSet uint32
	schedSet                        []uint32
}

// filterABIs are the ABIs the filter knows, per GOARCH.
var filterABIs = map[string]sysABI{
	"amd64": {audit: unix.AUDIT_ARCH_X86_64, compat: unix.AUDIT_ARCH_I386, x32: true, nr: sysNumbers{
		socket: 41, socketpair: 53, ioctl: 16, clone: 56, clone3: 435, unshare: 272,
		ioUring:  []uint32{425, 426, 427},
		keyring:  []uint32{248, 249, 250},
		byHandle: []uint32{303, 304},
		// shmget shmat shmctl semget semop semctl shmdt msgget msgsnd msgrcv msgctl semtimedop mq_open mq_unlink
		ipc:    []uint32{29, 30, 31, 64, 65, 66, 67, 68, 69, 70, 71, 220, 240, 241},
		other:  []uint32{321, 323}, // bpf, userfaultfd
		shmget: 29, semget: 64, msgget: 68,
		prlimit: 302, setpriority: 141, ioprioSet: 251,
		schedSet: []uint32{142, 144, 203, 314},
	}},
	"arm64": {audit: unix.AUDIT_ARCH_AARCH64, compat: unix.AUDIT_ARCH_ARM, nr: sysNumbers{
		socket: 198, socketpair: 199, ioctl: 29, clone: 220, clone3: 435, unshare: 97,
		ioUring:  []uint32{425, 426, 427},
		keyring:  []uint32{217, 218, 219},
		byHandle: []uint32{264, 265},
		// mq_open mq_unlink msgget msgctl msgrcv msgsnd semget semctl semtimedop semop shmget shmctl shmat shmdt
		ipc:    []uint32{180, 181, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197},
		other:  []uint32{280, 282},
		shmget: 194, semget: 190, msgget: 186,
		prlimit: 261, setpriority: 140, ioprioSet: 30,
		schedSet: []uint32{118, 119, 122, 274},
	}},
}

// FilterSupported reports whether the filter can be installed on this architecture; where it
// cannot, agents keep Unix sockets and the rest, and the runtime warns.
func FilterSupported() bool { _, ok := filterABIs[goruntime.GOARCH]; return ok }

// allowedIoctls are the ioctl requests an agent may make (the kernel reads the request as 32
// bits: so does the filter).
var allowedIoctls = []uint32{
	// terminals: the agent's own pseudo-terminals (and isatty's TCGETS on anything)
	unix.TCGETS, unix.TCSETS, unix.TCSETSW, unix.TCSETSF, unix.TCGETS2, unix.TCSETS2, unix.TCSETSW2, unix.TCSETSF2,
	unix.TIOCGWINSZ, unix.TIOCSWINSZ, unix.TIOCGPGRP, unix.TIOCSPGRP, unix.TIOCGSID, unix.TIOCSCTTY, unix.TIOCNOTTY,
	unix.TCFLSH, unix.TCXONC, unix.TCSBRK, unix.TCSBRKP, unix.TIOCOUTQ, unix.TIOCPKT, unix.TIOCEXCL, unix.TIOCNXCL,
	unix.TIOCGPTN, unix.TIOCSPTLCK, unix.TIOCGPTLCK, unix.TIOCGPTPEER, unix.TIOCGPKT, unix.TIOCGEXCL, unix.TIOCSIG,
	unix.TIOCMGET, unix.TIOCGETD,
	// descriptors
	unix.TIOCINQ, fionbio, fioasync, fioclex, fionclex, fioqsize, fiogetown, fiosetown,
	// files
	unix.FS_IOC_GETFLAGS, unix.FS_IOC_SETFLAGS, fsIocGetversion, fsIocFiemap, unix.FICLONE, unix.FICLONERANGE,
	unix.FIDEDUPERANGE, fsIocFsgetxattr, fsIocFssetxattr, figetbsz,
	// sockets: queries
	unix.SIOCGIFCONF, unix.SIOCGIFFLAGS, unix.SIOCGIFADDR, unix.SIOCGIFINDEX, unix.SIOCGIFNAME, unix.SIOCGIFHWADDR,
	unix.SIOCGIFMTU, unix.SIOCGIFNETMASK, unix.SIOCGIFBRDADDR, unix.SIOCATMARK, unix.SIOCGSTAMP, unix.SIOCGSTAMPNS,
	unix.SIOCGPGRP, unix.SIOCSPGRP,
}

// Requests x/sys/unix does not name (the same on x86_64 and arm64: asm-generic/ioctls.h,
// linux/fs.h).
const (
	fionbio, fioasync, fioclex, fionclex, fioqsize = 0x5421, 0x5452, 0x5451, 0x5450, 0x5460
	fiogetown, fiosetown                           = 0x8903, 0x8901
	fsIocGetversion, fsIocFiemap                   = 0x80087601, 0xc020660b
	fsIocFsgetxattr, fsIocFssetxattr               = 0x801c581f, 0x401c5820
	figetbsz                                       = 2
)

// In an IPC namespace of its own, System V IPC's memory is the kernel's: charged to no
// process and kept until the namespace's last process ends, whatever the OOM killer ends
// first, under the namespace's own limits, which are as large as the machine (a segment of a
// gigabyte went in). The filter bounds what one call can make, so that the namespace's
// counts bound the whole: a shared memory segment of at most 64 KiB (4096 segments: 256 MiB),
// a semaphore set of at most 32 (32000 sets: some 70 MiB). Message queues (32000 of 16 KiB)
// are refused: nothing an agent runs needs them.
const maxShmSegment, maxSemSet = 64 << 10, 32

// ioprio_set's which (linux/ioprio.h): a process (thread) or a process group; IOPRIO_WHO_USER
// (3) is every process of a user.
const ioprioWhoProcess, ioprioWhoPgrp = 1, 2

// filterProgram assembles the filter for abi with opts.
func filterProgram(abi sysABI, opts FilterOptions) []unix.SockFilter {
	var a asm
	a.ld(offArch)
	a.jeq(abi.audit, "native", "")
	a.jeq(abi.compat, "enosys", "")
	a.ret(unix.SECCOMP_RET_KILL_PROCESS) // an ABI the filter does not know
	a.label("native")
	a.ld(offNr)
	if abi.x32 {
		a.jge(x32Bit, "enosys", "")
	}
	n := abi.nr
	a.jeq(n.socket, "socket", "")
	a.jeq(n.socketpair, "socketpair", "")
	a.jeq(n.ioctl, "ioctl", "")
	a.jeq(n.clone, "newuser", "")
	a.jeq(n.unshare, "newuser", "")
	a.jeq(n.clone3, "enosys", "")
	a.jeq(n.prlimit, "prlimit", "")
	a.jeq(n.setpriority, "setpriority", "")
	a.jeq(n.ioprioSet, "ioprio_set", "")
	a.jeqAny(n.schedSet, "self")
	a.jeqAny(n.ioUring, "enosys")
	a.jeqAny(n.keyring, "eperm")
	a.jeqAny(n.byHandle, "eperm")
	a.jeqAny(n.other, "eperm")
	if opts.PrivateIPC {
		a.jeq(n.shmget, "shmget", "")
		a.jeq(n.semget, "semget", "")
		a.jeq(n.msgget, "eacces", "")
	} else {
		a.jeqAny(n.ipc, "eacces")
	}
	a.ret(unix.SECCOMP_RET_ALLOW)

	a.label("socket")
	a.ld(offArg0) // domain
	a.jeq(unix.AF_INET, "inet", "")
	a.jeq(unix.AF_INET6, "inet", "")
	a.jeq(unix.AF_NETLINK, "netlink", "")
	a.jeq(unix.AF_UNIX, "unix", "")
	a.ret(errno(unix.EAFNOSUPPORT))
	a.label("inet")
	if opts.TCPOnly {
		a.ld(offArg1)
		a.and(0xf) // SOCK_TYPE_MASK
		a.jeq(unix.SOCK_STREAM, "", "eacces")
		a.ld(offArg2) // protocol: 0 is TCP for a stream socket
		a.jeq(0, "allow", "")
		a.jeq(unix.IPPROTO_TCP, "allow", "eacces")
	} else {
		a.socketType(unix.SOCK_STREAM, unix.SOCK_DGRAM)
	}
	a.label("netlink")
	a.ld(offArg2) // protocol
	a.jeq(unix.NETLINK_ROUTE, "allow", "eacces")
	a.label("unix")
	if opts.UnixSockets {
		a.socketType(unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_SEQPACKET)
	} else {
		a.ret(errno(unix.EACCES))
	}

	a.label("socketpair")
	if opts.UnixSockets {
		a.socketType(unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_SEQPACKET)
	} else {
		a.socketType(unix.SOCK_STREAM, unix.SOCK_SEQPACKET)
	}

	a.label("ioctl")
	a.ld(offArg1) // the request's low 32 bits, as the kernel reads it
	a.jeqAny(allowedIoctls, "allow")
	a.ret(errno(unix.ENOTTY))

	a.label("prlimit") // prlimit64(pid, resource, new, old): set its own, read any
	a.ld(offArg0)
	a.jeq(0, "allow", "")
	a.ld(offArg2) // new: a 64-bit pointer, NULL to only read
	a.jeq(0, "", "eperm")
	a.ld(offArg2 + 4)
	a.jeq(0, "allow", "eperm")
	a.label("setpriority") // setpriority(which, who, prio): its own thread or group, never a user's
	a.ld(offArg1)
	a.jeq(0, "", "eperm")
	a.ld(offArg0)
	a.jeq(unix.PRIO_PROCESS, "allow", "")
	a.jeq(unix.PRIO_PGRP, "allow", "eperm")
	a.label("ioprio_set") // ioprio_set(which, who, prio): the same, IOPRIO_WHO_PROCESS or _PGRP
	a.ld(offArg1)
	a.jeq(0, "", "eperm")
	a.ld(offArg0)
	a.jeq(ioprioWhoProcess, "allow", "")
	a.jeq(ioprioWhoPgrp, "allow", "eperm")
	a.label("self") // the sched_set* calls: its own thread only
	a.ld(offArg0)
	a.jeq(0, "allow", "eperm")

	a.label("shmget") // shmget(key, size, flags): size is 64 bits
	a.ld(offArg1 + 4)
	a.jeq(0, "", "einval")
	a.ld(offArg1)
	a.jge(maxShmSegment+1, "einval", "allow")
	a.label("semget") // semget(key, nsems, flags): an int, a negative one is large here
	a.ld(offArg1)
	a.jge(maxSemSet+1, "einval", "allow")

	a.label("newuser")
	a.ld(offArg0) // flags
	a.jset(unix.CLONE_NEWUSER, "eperm", "allow")

	a.label("allow")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("eacces")
	a.ret(errno(unix.EACCES))
	a.label("eperm")
	a.ret(errno(unix.EPERM))
	a.label("enosys")
	a.ret(errno(unix.ENOSYS))
	a.label("einval")
	a.ret(errno(unix.EINVAL))
	return a.assemble()
}

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA }

// installFilter installs the filter on the calling thread (flags 0) or on every thread of
// the process (SECCOMP_FILTER_FLAG_TSYNC); the calling thread must have set no_new_privs. It
// does nothing where the filter is not supported.
func installFilter(opts FilterOptions, flags uintptr) error {
	abi, ok := filterABIs[goruntime.GOARCH]
	if !ok {
		return nil
	}
	f := filterProgram(abi, opts)
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if r, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog))); e != 0 || r != 0 {
		if e == 0 {
			e = unix.EBUSY // TSYNC: thread r could not be synchronised
		}
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", e)
	}
	goruntime.KeepAlive(f)
	return nil
}

// InstallProcessFilter installs the filter with opts on every thread of the calling process,
// and no_new_privs with it: for a process that only ever forks agents that need this filter
// (a guardian of confined turns), which then loads it once instead of once a turn (loading
// and compiling it was a tenth of a millisecond). What the process does itself must pass it.
func InstallProcessFilter(opts FilterOptions) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	return installFilter(opts, unix.SECCOMP_FILTER_FLAG_TSYNC)
}
