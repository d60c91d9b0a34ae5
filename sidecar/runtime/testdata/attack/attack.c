/* attack: what a hostile agent tries through the system calls no tool of its CLI names, one
 * attempt per argument; each prints "ALLOWED <what>" or "REFUSED <what>: <error>". The tests
 * (channels_test.go) build it with the system's cc and run it as a confined agent. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

static int result(const char *what, long r) {
	if (r < 0)
		printf("REFUSED %s: %s\n", what, strerror(errno));
	else
		printf("ALLOWED %s\n", what);
	return 0;
}

/* int 0x80: the 32-bit ABI from a 64-bit process (i386's getpid is 20). */
static long int80_getpid(void) {
#if defined(__x86_64__)
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20) : "memory");
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* open path with flags (made if missing, for a write) and read or write one byte. */
static void device(const char *what, const char *path, int flags) {
	char b[1] = {'x'};
	int fd = open(path, flags | O_NOCTTY | O_NONBLOCK, 0600);
	if (fd < 0) {
		result(what, -1);
		return;
	}
	long r = (flags & O_ACCMODE) == O_RDONLY ? read(fd, b, 1) : write(fd, b, 1);
	if (r < 0 && errno == EAGAIN)
		r = 0; /* opened: that is the escape */
	result(what, r);
	close(fd);
}


/* a pidfd for pid, or -1 */
static int pidfd(int pid) { return syscall(__NR_pidfd_open, pid, 0); }

/* the resources an agent might set on another process; one attempt each, all harmless values
 * the test reads back: RLIMIT_CORE's soft limit 4242, nice 19, SCHED_IDLE, CPU 0 only, the
 * idle I/O class. */
static void others(const char *what, int pid) {
	char name[64];
	struct rlimit rl;
	snprintf(name, sizeof name, "%s-prlimit", what);
	if (prlimit(pid, RLIMIT_CORE, 0, &rl) == 0) {
		rl.rlim_cur = 4242;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 4242)
			rl.rlim_cur = rl.rlim_max;
		result(name, prlimit(pid, RLIMIT_CORE, &rl, 0));
	} else
		result(name, -1);
	snprintf(name, sizeof name, "%s-setpriority", what);
	result(name, setpriority(PRIO_PROCESS, pid, 19));
	snprintf(name, sizeof name, "%s-sched", what);
	struct sched_param sp = {0};
	result(name, sched_setscheduler(pid, SCHED_IDLE, &sp));
	snprintf(name, sizeof name, "%s-affinity", what);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	result(name, sched_setaffinity(pid, sizeof set, &set));
	snprintf(name, sizeof name, "%s-ioprio", what);
	result(name, syscall(__NR_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, pid, 3 << 13 /* IDLE */));
}

/* the ways to reach into another process's memory, files or kernel objects */
static void reach(const char *what, int pid) {
	char name[64];
	snprintf(name, sizeof name, "%s-ptrace", what);
	long r = ptrace(PTRACE_SEIZE, pid, 0, 0);
	result(name, r);
	if (r == 0)
		ptrace(PTRACE_DETACH, pid, 0, 0);
	snprintf(name, sizeof name, "%s-vmread", what);
	char buf[16];
	struct iovec local = {buf, sizeof buf}, remote = {(void *)0x400000, sizeof buf};
	r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	result(name, r < 0 && errno == EFAULT ? 0 : r); /* EFAULT: allowed, the address was wrong */
	snprintf(name, sizeof name, "%s-kcmp", what);
	result(name, syscall(__NR_kcmp, getpid(), pid, 0 /* KCMP_FILE */, 0, 0));
	int pfd = pidfd(pid);
	snprintf(name, sizeof name, "%s-getfd", what);
	result(name, pfd < 0 ? -1 : syscall(__NR_pidfd_getfd, pfd, 0, 0));
	snprintf(name, sizeof name, "%s-madvise", what);
	struct iovec iv = {(void *)0x400000, 4096};
	r = pfd < 0 ? -1 : syscall(__NR_process_madvise, pfd, &iv, 1, 21 /* MADV_COLD */, 0);
	result(name, r < 0 && (errno == EFAULT || errno == ENOMEM) ? 0 : r);
	snprintf(name, sizeof name, "%s-pidfd-kill", what);
	result(name, pfd < 0 ? -1 : syscall(__NR_pidfd_send_signal, pfd, 0, 0, 0));
	snprintf(name, sizeof name, "%s-perf", what);
	struct {
		unsigned int type, size;
		unsigned long long config, sample, sample_type, read_format, flags;
		char rest[96];
	} attr = {.type = 1 /* SOFTWARE */, .size = 128, .config = 0 /* CPU_CLOCK */, .flags = 1 /* disabled */};
	result(name, syscall(__NR_perf_event_open, &attr, pid, -1, -1, 0));
	snprintf(name, sizeof name, "%s-sigio-armed", what); /* armed; whether it lands is the test's */
	int p[2];
	if (pipe(p) == 0) {
		/* the owner gets SIGIO (which ends a process without a handler) when the pipe has data */
		fcntl(p[0], F_SETSIG, SIGKILL);
		r = fcntl(p[0], F_SETOWN, pid);
		if (r == 0)
			r = fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK);
		if (r == 0)
			r = write(p[1], "x", 1);
		result(name, r);
		close(p[0]);
		close(p[1]);
	}
	if (pfd >= 0)
		close(pfd);
}

/* unshare/clone each namespace; mount and the new mount API; chroot */
static void namespaces(void) {
	struct { const char *n; int f; } ns[] = {
		{"unshare-user", CLONE_NEWUSER}, {"unshare-mnt", CLONE_NEWNS}, {"unshare-net", CLONE_NEWNET},
		{"unshare-pid", CLONE_NEWPID}, {"unshare-ipc", CLONE_NEWIPC}, {"unshare-uts", CLONE_NEWUTS},
		{"unshare-cgroup", CLONE_NEWCGROUP}, {"unshare-time", 0x80 /* CLONE_NEWTIME */}};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		pid_t c = fork();
		if (c == 0) {
			result(ns[i].n, unshare(ns[i].f));
			fflush(stdout);
			_exit(0);
		}
		waitpid(c, 0, 0);
	}
	result("mount", mount("none", "/tmp", "tmpfs", 0, 0));
	result("fsopen", syscall(__NR_fsopen, "tmpfs", 0));
	result("open_tree", syscall(__NR_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
	result("chroot", chroot("/tmp"));
	result("setns", setns(open("/proc/1/ns/mnt", O_RDONLY), 0));
}

int main(int argc, char **argv) {
	signal(SIGPIPE, SIG_IGN); /* a write to a pipe nobody reads is a refusal, not its end */
	for (int i = 1; i < argc; i++) {
		char *a = argv[i], *arg = strchr(a, '=');
		if (arg)
			*arg++ = 0;
		if (!strcmp(a, "int80")) {
			result("int80", int80_getpid());
		} else if (!strcmp(a, "x32")) {
			result("x32", syscall(__NR_getpid | 0x40000000));
		} else if (!strcmp(a, "io_uring")) {
			char params[120] = {0};
			long fd = syscall(425, 1, params);
			result("io_uring", fd);
		} else if (!strcmp(a, "keyring")) {
			/* the user keyring's id (KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING) */
			result("keyring", syscall(__NR_keyctl, 0, -4, 0));
		} else if (!strcmp(a, "sysv-shm")) { /* sysv-shm=KEY: the person's segment */
			long id = shmget(atoi(arg), 0, 0);
			if (id >= 0) {
				char *p = shmat(id, 0, SHM_RDONLY);
				printf("ALLOWED sysv-shm %.20s\n", p == (void *)-1 ? "(not attached)" : p);
			} else
				result("sysv-shm", -1);
		} else if (!strcmp(a, "mq")) { /* mq=NAME: the person's message queue */
			result("mq", syscall(__NR_mq_open, arg, O_RDWR, 0, 0));
		} else if (!strcmp(a, "read")) { /* read=PATH */
			device("read", arg, O_RDONLY);
		} else if (!strcmp(a, "write")) { /* write=PATH, made if missing */
			device("write", arg, O_WRONLY | O_CREAT);
		} else if (!strcmp(a, "mknod-block")) { /* mknod-block=PATH: a node for the first disk */
			long r = mknod(arg, S_IFBLK | 0600, makedev(253, 0));
			result("mknod-block", r);
			if (r == 0)
				device("mknod-open", arg, O_RDONLY);
		} else if (!strcmp(a, "tty")) {
			device("tty", "/dev/tty", O_RDWR);
		} else if (!strcmp(a, "tiocsti")) { /* tiocsti=PATH: type into that terminal */
			int fd = open(arg, O_RDWR | O_NOCTTY | O_NONBLOCK);
			if (fd < 0) {
				result("tiocsti-open", -1);
				continue;
			}
			const char *cmd = "echo PWNED-BY-AGENT\n";
			long r = 0;
			for (const char *c = cmd; *c && r >= 0; c++)
				r = ioctl(fd, TIOCSTI, c);
			result("tiocsti", r);
			close(fd);
		} else if (!strcmp(a, "escape")) { /* escape=PATH: an OSC 52 clipboard write and a title */
			int fd = open(arg, O_WRONLY | O_NOCTTY | O_NONBLOCK);
			const char *esc = "\033]52;c;UFdORUQ=\007\033]0;PWNED-TITLE\007";
			result("escape", fd < 0 ? -1 : write(fd, esc, strlen(esc)));
		} else if (!strcmp(a, "setsid-tty")) { /* setsid-tty=PATH: take it as a controlling terminal */
			pid_t child = fork();
			if (child == 0) {
				setsid();
				int fd = open(arg, O_RDWR);
				result("setsid-tty", fd < 0 ? -1 : ioctl(fd, TIOCSCTTY, 0));
				fflush(stdout);
				_exit(0);
			}
			waitpid(child, 0, 0);
		} else if (!strcmp(a, "kill-all")) { /* kill(-1, SIGKILL): every process it may signal */
			result("kill-all", kill(-1, SIGKILL));
		} else if (!strcmp(a, "kill")) { /* kill=PID */
			result("kill", kill(atoi(arg), SIGKILL));
		} else if (!strcmp(a, "abstract")) { /* abstract=NAME: connect to @NAME */
			int s = socket(AF_UNIX, SOCK_STREAM, 0);
			if (s < 0) {
				result("abstract", -1);
				continue;
			}
			struct sockaddr_un sa = {.sun_family = AF_UNIX};
			strncpy(sa.sun_path + 1, arg, sizeof sa.sun_path - 2);
			result("abstract", connect(s, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + 1 + strlen(arg)));
		} else if (!strcmp(a, "udp")) { /* udp=PORT: a datagram to 127.0.0.1:PORT */
			int s = socket(AF_INET, SOCK_DGRAM, 0);
			struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(arg))};
			sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			result("udp", s < 0 ? -1 : sendto(s, "x", 1, 0, (struct sockaddr *)&sa, sizeof sa));
		} else if (!strcmp(a, "packet")) {
			result("packet", socket(AF_PACKET, SOCK_RAW, 0));
		} else if (!strcmp(a, "fds")) { /* every descriptor beyond stdio it was handed: write to each */
			int n = 0;
			for (int fd = 3; fd < 4096; fd++) {
				if (fcntl(fd, F_GETFD) < 0)
					continue;
				char link[64], to[256] = "";
				snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
				readlink(link, to, sizeof to - 1);
				printf("ALLOWED fd %d -> %s: write %ld\n", fd, to, (long)write(fd, "FD-LEAKED-TO-AGENT\n", 19));
				n++;
			}
			if (!n)
				printf("REFUSED fds: none beyond stdio\n");
		} else if (!strcmp(a, "others")) { /* others=PID: scheduling and limits of PID */
			others("others", atoi(arg));
		} else if (!strcmp(a, "reach")) { /* reach=PID: memory, files, signals of PID */
			reach("reach", atoi(arg));
		} else if (!strcmp(a, "parent")) { /* the guardian (or whatever started the agent) */
			reach("parent", getppid());
			others("parent", getppid());
		} else if (!strcmp(a, "namespaces")) {
			namespaces();
		} else if (!strcmp(a, "sidecar-limit")) { /* sidecar-limit=PID: its core-size limit only */
			struct rlimit rl;
			long r = prlimit(atoi(arg), RLIMIT_CORE, 0, &rl);
			if (r == 0) {
				rl.rlim_cur = rl.rlim_cur == 4242 ? 4243 : 4242;
				if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
					rl.rlim_cur = 0;
				r = prlimit(atoi(arg), RLIMIT_CORE, &rl, 0);
			}
			result("sidecar-limit", r);
		} else if (!strcmp(a, "own-limits")) { /* its own: a limit, nice, policy, CPUs, I/O class */
			struct rlimit rl = {0, 0};
			struct sched_param sp = {0};
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(0, &set);
			long r = prlimit(0, RLIMIT_CORE, &rl, 0);
			if (r == 0)
				r = setpriority(PRIO_PROCESS, 0, 5);
			if (r == 0)
				r = sched_setscheduler(0, SCHED_BATCH, &sp);
			if (r == 0)
				r = sched_setaffinity(0, sizeof set, &set);
			if (r == 0)
				r = syscall(__NR_ioprio_set, 1, 0, 3 << 13);
			result("own-limits", r);
		} else if (!strcmp(a, "prio-user")) { /* every process of its user */
			result("prio-user", setpriority(PRIO_USER, 0, getpriority(PRIO_USER, 0)));
		} else if (!strcmp(a, "family")) { /* family=N: a socket of that address family */
			int f = atoi(arg), ok = -1;
			int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET};
			for (int t = 0; t < 4 && ok < 0; t++)
				ok = socket(f, types[t], 0);
			char name[32];
			snprintf(name, sizeof name, "family-%d", f);
			result(name, ok);
		} else if (!strcmp(a, "netlink")) { /* netlink=PROTO */
			char name[32];
			snprintf(name, sizeof name, "netlink-%s", arg);
			result(name, socket(AF_NETLINK, SOCK_RAW, atoi(arg)));
		} else if (!strcmp(a, "ping")) { /* an ICMP echo socket */
			result("ping", socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
		} else if (!strcmp(a, "udp6")) { /* udp6=PORT: a datagram to [::1]:PORT */
			int s = socket(AF_INET6, SOCK_DGRAM, 0);
			struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons(atoi(arg)), .sin6_addr = IN6ADDR_LOOPBACK_INIT};
			result("udp6", s < 0 ? -1 : sendto(s, "x", 1, 0, (struct sockaddr *)&sa, sizeof sa));
		} else if (!strcmp(a, "tcp6")) { /* tcp6=PORT: connect to [::1]:PORT */
			int s = socket(AF_INET6, SOCK_STREAM, 0);
			struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons(atoi(arg)), .sin6_addr = IN6ADDR_LOOPBACK_INIT};
			result("tcp6", s < 0 ? -1 : connect(s, (struct sockaddr *)&sa, sizeof sa));
		} else if (!strcmp(a, "mptcp") || !strcmp(a, "sctp")) { /* mptcp=PORT: TCP's kin, to 127.0.0.1:PORT */
			int s = socket(AF_INET, SOCK_STREAM, a[0] == 'm' ? 262 /* IPPROTO_MPTCP */ : IPPROTO_SCTP);
			struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(arg))};
			sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			result(a, s < 0 ? -1 : connect(s, (struct sockaddr *)&sa, sizeof sa));
		} else if (!strcmp(a, "tcp")) { /* tcp=PORT: connect to 127.0.0.1:PORT */
			int s = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(arg))};
			sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			result("tcp", s < 0 ? -1 : connect(s, (struct sockaddr *)&sa, sizeof sa));
		} else if (!strcmp(a, "link-opath")) { /* link-opath=SRC:DST, through an O_PATH descriptor */
			char *dst = strchr(arg, ':');
			*dst++ = 0;
			int fd = open(arg, O_PATH);
			result("link-opath", fd < 0 ? -1 : linkat(fd, "", AT_FDCWD, dst, AT_EMPTY_PATH));
		} else if (!strcmp(a, "link")) { /* link=SRC:DST */
			char *dst = strchr(arg, ':');
			*dst++ = 0;
			result("link", link(arg, dst));
		} else if (!strcmp(a, "syslog")) { /* the kernel's log through syslog(2) */
			char b[64];
			result("syslog", syscall(__NR_syslog, 3 /* READ_ALL */, b, sizeof b));
		} else if (!strcmp(a, "memfd-exec")) { /* a program run from memory */
			int fd = memfd_create("x", 0), in = open("/bin/true", O_RDONLY);
			char b[65536];
			long n;
			while (fd >= 0 && in >= 0 && (n = read(in, b, sizeof b)) > 0)
				write(fd, b, n);
			pid_t c = fork();
			if (c == 0) {
				char *av[] = {"true", 0};
				syscall(__NR_execveat, fd, "", av, av + 1, AT_EMPTY_PATH);
				_exit(99);
			}
			int st = 0;
			waitpid(c, &st, 0);
			result("memfd-exec", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1);
		} else if (!strcmp(a, "handle")) { /* handle=PATH: name_to_handle_at, then open_by_handle_at */
			struct { unsigned int bytes; int type; unsigned char h[128]; } fh = {.bytes = 128};
			int mnt;
			long r = syscall(__NR_name_to_handle_at, AT_FDCWD, arg, &fh, &mnt, 0);
			result("name_to_handle", r);
			if (r == 0)
				result("open_by_handle", syscall(__NR_open_by_handle_at, open("/", O_RDONLY), &fh, O_RDONLY));
		} else if (!strcmp(a, "lease")) { /* lease=PATH: a write lease, held for 100 s */
			int fd = open(arg, O_RDONLY);
			long r = fd < 0 ? -1 : fcntl(fd, F_SETLEASE, F_RDLCK);
			result("lease", r);
			if (r == 0 && fork() == 0) {
				setsid();
				sleep(100);
				_exit(0);
			}
		} else {
			printf("UNKNOWN %s\n", a);
		}
		fflush(stdout);
	}
	return 0;
}
