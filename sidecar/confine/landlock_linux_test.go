package confine

import (
	"os"
	"runtime"
	"testing"
)

// BenchmarkRestrictThread: applying a worker's policy to a fresh thread, as the guardian does
// for each confined turn (the thread ends with its goroutine).
func BenchmarkRestrictThread(b *testing.B) {
	if !Probe().Available() {
		b.Skip("no Landlock here")
	}
	p := Build(Agent{Backend: "command", Tmp: b.TempDir(), Env: os.Environ(), Executable: "/usr/bin/bash"})
	errs := make(chan error)
	for b.Loop() {
		go func() {
			runtime.LockOSThread() // never unlocked: the restricted thread ends here
			_, err := p.RestrictThread()
			errs <- err
		}()
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

// A restricted thread is refused what its policy does not allow; the rest of the process is
// not restricted.
func TestRestrictThreadOnlyThatThread(t *testing.T) {
	if !Probe().Available() {
		t.Skip("no Landlock here")
	}
	dir := t.TempDir()
	p := Policy{Rules: []Rule{{Write, dir}}}
	done := make(chan [2]error)
	go func() {
		runtime.LockOSThread()
		if _, err := p.RestrictThread(); err != nil {
			done <- [2]error{err}
			return
		}
		_, errEtc := os.ReadFile("/etc/hostname")
		errDir := os.WriteFile(dir+"/x", []byte("x"), 0o644)
		done <- [2]error{errEtc, errDir}
	}()
	r := <-done
	if !os.IsPermission(r[0]) || r[1] != nil {
		t.Errorf("on the restricted thread: read /etc: %v; write the allowed folder: %v", r[0], r[1])
	}
	if _, err := os.ReadFile("/etc/hostname"); err != nil && os.IsPermission(err) {
		t.Errorf("the rest of the process is restricted too: %v", err)
	}
}

// A rule whose path has become a link (after Build resolved it) allows nothing.
func TestRestrictThreadRefusesLinks(t *testing.T) {
	if !Probe().Available() {
		t.Skip("no Landlock here")
	}
	dir, secret := t.TempDir(), t.TempDir()
	if err := os.WriteFile(secret+"/key", []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, dir+"/link"); err != nil {
		t.Fatal(err)
	}
	p := Policy{Rules: []Rule{{Read, dir + "/link"}}}
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		if _, err := p.RestrictThread(); err != nil {
			done <- err
			return
		}
		_, err := os.ReadFile(secret + "/key")
		done <- err
	}()
	if err := <-done; !os.IsPermission(err) {
		t.Errorf("read through a rule on a link: %v, want permission denied", err)
	}
}
