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

int main(int argc, char **argv) {
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
		} else {
			printf("UNKNOWN %s\n", a);
		}
		fflush(stdout);
	}
	return 0;
}
