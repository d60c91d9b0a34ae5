package confine

import (
	"errors"
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Probe says whether this kernel has Landlock and which ABI version.
func Probe() Status {
	if os.Getenv(NoLandlockEnv) == "1" {
		return Status{Reason: "hidden for a test (" + NoLandlockEnv + "=1)"}
	}
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 1 {
		reason := "the kernel has no Landlock or it is not enabled (see /sys/kernel/security/lsm; Linux 5.13 or later)"
		if err != nil {
			reason += ": " + err.Error()
		}
		return Status{Reason: reason}
	}
	return Status{ABI: v}
}

// presets are go-landlock's configurations per ABI version (V1…): what each version can
// restrict. The best effort is the preset of the kernel's version.
var presets = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// handled is what a policy restricts on a kernel with the given ABI: every filesystem right
// the kernel knows but one, TCP (and from ABI 10 UDP) only for DenyNetwork, and the scopes
// (signals to and abstract Unix sockets of processes outside the agent's domain, ABI 6).
//
// Landlock's rule for connecting to pathname Unix sockets (ABI 9, "resolve unix") is not
// used: RestrictThread's seccomp filter refuses Unix sockets as a whole on every kernel,
// unless the flow grants some (Policy.AllowUnixSockets). docs/agents.md says so.
func handled(abi int, p Policy) ll.RulesetAttr {
	c := presets[min(abi, len(presets))-1]
	attr := ll.RulesetAttr{
		HandledAccessFS: uint64(c.HandledAccessFS) &^ ll.AccessFSResolveUnix,
		Scoped:          uint64(c.Scoped),
	}
	if p.DenyNetwork {
		attr.HandledAccessNet = uint64(c.HandledAccessNet)
	}
	attr.HandledAccessNet |= connectHandled(abi, p)
	return attr
}

// rights are the filesystem rights of each Access, for folders; files take the subset that
// applies to files.
func rights(a Access) uint64 {
	const read = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	// No MakeChar or MakeBlock: a device node made in work/ would open a disk or a terminal.
	const write = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSym | ll.AccessFSTruncate | ll.AccessFSRefer
	switch a {
	case Read:
		return read
	case List:
		return ll.AccessFSReadDir
	case Write:
		return read | write
	case Device:
		return read | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	}
	return 0
}

const fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev

// ErrUnavailable is returned by RestrictThread on a kernel without Landlock.
var ErrUnavailable = errors.New("this kernel has no Landlock")

// RestrictThread confines the calling OS thread with p; it returns the ABI version enforced.
// Only this thread is restricted (the rest of the process is not), and a process it forks
// inherits the restriction with its credentials, irrevocably. So the caller must have called
// runtime.LockOSThread and must never unlock it: the goroutine ends locked, and the Go runtime
// then ends the thread instead of reusing it. (A locked thread never creates the runtime's new
// threads either: the runtime has a template thread do that, so none inherits the rules.)
//
// Rules whose path is missing or cannot be opened are left out: they allow nothing then.
func (p Policy) RestrictThread() (int, error) {
	r, err := p.Prepare()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return r.RestrictThread()
}

// Ruleset is a policy's Landlock ruleset, made once and applied to each thread that forks
// one of its agents: a guardian whose turns all have the same rules (a world's) makes it at
// its first turn and applies it at every one, sparing the rules' opening (their paths were
// resolved then, as the world's mounts were).
type Ruleset struct {
	fd, abi int
	policy  Policy
}

// Prepare makes p's ruleset; ErrUnavailable without Landlock.
func (p Policy) Prepare() (*Ruleset, error) {
	st := Probe()
	if !st.Available() {
		return nil, fmt.Errorf("%w (%s)", ErrUnavailable, st.Reason)
	}
	attr := handled(st.ABI, p)
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	r := &Ruleset{fd: fd, abi: st.ABI, policy: p}
	for _, rule := range p.Rules {
		if err := addRule(fd, attr.HandledAccessFS, rule); err != nil {
			r.Close()
			return nil, err
		}
	}
	if err := addPortRules(fd, attr, p); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Close releases the ruleset (the domains made from it stay).
func (r *Ruleset) Close() { unix.Close(r.fd) }

// RestrictThread confines the calling thread with the ruleset (see Policy.RestrictThread).
func (r *Ruleset) RestrictThread() (int, error) {
	p := r.policy
	dropCaps()
	// no_new_privs is per thread, like the ruleset: Landlock needs it from an unprivileged
	// process, and the agent inherits it (setuid programs do not raise its rights).
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	// No TSYNC flag: this thread only.
	if err := ll.LandlockRestrictSelf(r.fd, 0); err != nil {
		return 0, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if want := p.FilterOptions(r.abi); p.ProcessFilter == nil || *p.ProcessFilter != want {
		if err := installFilter(want, 0); err != nil {
			return 0, fmt.Errorf("the system-call filter: %w", err)
		}
	}
	return r.abi, nil
}

// keptCaps are the only capabilities an agent keeps: those of a root user over files (a root
// sidecar's agents read a workspace another user owns, and unpack archives as root does) and
// binding a low port. Every other is out of reach: CAP_MKNOD (device nodes), CAP_NET_RAW and
// CAP_NET_ADMIN (the host's network), CAP_SYS_ADMIN and CAP_PERFMON (on Linux 6.18 a root
// process in a Landlock domain still reads another process's /proc/PID/environ with either),
// CAP_SYS_PTRACE, CAP_KILL, CAP_SETUID and CAP_SETGID, CAP_IPC_OWNER, CAP_LINUX_IMMUTABLE,
// CAP_SYS_RAWIO, CAP_BPF, …
var keptCaps = []uintptr{unix.CAP_CHOWN, unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH, unix.CAP_FOWNER,
	unix.CAP_FSETID, unix.CAP_NET_BIND_SERVICE}

// dropCaps makes the process the calling thread forks get keptCaps at most. A root agent's
// exec would make every capability of the bounding set its own; instead the thread sets
// SECBIT_NOROOT (locked: exec grants root nothing) and makes keptCaps ambient, which exec
// keeps. That is a few credential changes where dropping the other thirty-odd from the
// bounding set one by one was as many (a tenth of a millisecond a turn). Any other user has
// nothing to lose but ambient capabilities (a world's guardian has CAP_SYS_ADMIN in its own
// user namespace, to mount): they are cleared. no_new_privs keeps file capabilities and setuid
// programs from giving any back.
func dropCaps() {
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	if unix.Geteuid() != 0 {
		return
	}
	bits, _ := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
	_ = unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits)|secbitNoRoot|secbitNoRootLocked, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	for _, c := range keptCaps {
		data[c/32].Inheritable |= (data[c/32].Permitted & (1 << (c % 32)))
	}
	if unix.Capset(&hdr, &data[0]) != nil {
		return
	}
	for _, c := range keptCaps {
		_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, c, 0, 0)
	}
}

// Securebits (linux/securebits.h).
const (
	secbitNoRoot       = 1 << 0
	secbitNoRootLocked = 1 << 1
)

func addRule(ruleset int, handledFS uint64, r Rule) error {
	// Build resolved every link: one met now was made since, and could lead anywhere.
	fd, err := unix.Openat2(unix.AT_FDCWD, r.Path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return nil // missing, unreachable or through a link: nothing to allow
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil
	}
	access := rights(r.Access) & handledFS
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	if access == 0 {
		return nil
	}
	if err := ll.LandlockAddPathBeneathRule(ruleset, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}, 0); err != nil {
		return fmt.Errorf("landlock_add_rule %s %s: %w", r.Access, r.Path, err)
	}
	return nil
}
