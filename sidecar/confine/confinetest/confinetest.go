// Package confinetest holds what the tests of confined agents share: skipping where the
// kernel cannot confine, a loopback listener that counts the connections it got, and running
// an attack as root and again as an unprivileged user.
package confinetest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// Landlock skips the test on a kernel without Landlock (it shows what the kernel refuses)
// and returns the ABI version.
func Landlock(t testing.TB) int {
	t.Helper()
	st := confine.Probe()
	if !st.Available() {
		t.Skipf("agents cannot be confined here: %s", st.Reason)
	}
	return st.ABI
}

// Listener listens on 127.0.0.1 (an OS-chosen port) until the test ends; accepted gets a
// value for each connection it accepts.
func Listener(t testing.TB) (port string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			got <- struct{}{}
		}
	}()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), got
}

// RerunEnv is set in a test binary that AsRootAndNobody started again as nobody.
const RerunEnv = "AGENTCANVAS_TEST_AS_NOBODY"

// Rerun reports whether this test binary is such a run (its TestMain skips what needs root).
func Rerun() bool { return os.Getenv(RerunEnv) == "1" }

// nobody is the unprivileged user the attacks run as too (setpriv's --reuid/--regid).
const nobody = 65534

// AsRootAndNobody runs body as subtests "root" and "nobody": as root, ptrace and signal checks
// pass that an ordinary user's would not, and the reverse. Run by root, the nobody subtest
// runs this test binary again as uid and gid 65534 with no groups (setpriv) and passes when
// that run passed; run by anyone else, root is skipped and nobody runs body as that user.
// Where nobody cannot reach the package's folder or the repository's agent CLIs (a clone
// under a folder only its owner may enter), the run as nobody works in a copy of what the
// tests read (nobodyWorkdir).
func AsRootAndNobody(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	t.Run("root", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("not running as root")
		}
		body(t)
	})
	t.Run("nobody", func(t *testing.T) {
		if os.Getuid() != 0 {
			body(t)
			return
		}
		rerunAsNobody(t)
	})
}

func rerunAsNobody(t *testing.T) {
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("setpriv (util-linux) is needed to run the attack as an unprivileged user: %v", err)
	}
	dir, err := os.MkdirTemp(sharedTemp(), "as-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "test.bin")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := copyMode(self, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, tmp} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var pattern []string
	for _, part := range strings.Split(t.Name(), "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	workdir, err := nobodyWorkdir(dir)
	if err != nil {
		t.Fatalf("a working folder nobody can read: %v", err)
	}
	cmd := exec.Command("setpriv", "--reuid", strconv.Itoa(nobody), "--regid", strconv.Itoa(nobody), "--clear-groups", "--",
		bin, "-test.run", strings.Join(pattern, "/"), "-test.count", "1", "-test.v")
	cmd.Dir = workdir
	cmd.Env = append(os.Environ(), RerunEnv+"=1", "TMPDIR="+tmp, "HOME="+tmp)
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil {
		t.Fatalf("the run as nobody failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the run as nobody did not pass %s", t.Name())
	}
}
