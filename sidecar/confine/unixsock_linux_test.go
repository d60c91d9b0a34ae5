package confine

import (
	"errors"
	goruntime "runtime"
	"testing"
	"unsafe"

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
