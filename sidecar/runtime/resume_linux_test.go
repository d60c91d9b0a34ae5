package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

// A member of the agent's group that stops after the group was resumed (what a child forked
// during the pause and the resume does: it takes its pending stop signal late) is continued
// again, and the turn ends instead of waiting on it for ever.
func TestResumeContinuesAMemberStoppedLate(t *testing.T) {
	dir := t.TempDir()
	// The agent's child stops itself once told to go (SIGSTOP: a stop signal the kernel
	// never discards), then says it was continued; the agent waits for it.
	inner := "while [ ! -e go ]; do sleep 0.01; done\nkill -STOP $$\necho continued > continued\n"
	if err := os.WriteFile(filepath.Join(dir, "inner.sh"), []byte(inner), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := spawnOS([]string{"sh", "-c", "sh inner.sh & wait"}, dir, os.Environ(), "", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.signal(sigKill); c.wait(); c.release() }()
	if err := c.signal(sigPause); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the agent to stop", func() bool { st, _ := procState(c.pid()); return st == 'T' })
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.signal(sigResume); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the child that stopped after the resume to be continued", func() bool {
		_, err := os.Stat(filepath.Join(dir, "continued"))
		return err == nil
	})
}

// A resume's checks end when the group is paused again: they never undo a later pause.
func TestResumeChecksKeepALaterPause(t *testing.T) {
	dir := t.TempDir()
	c, err := spawnOS([]string{"sh", "-c", "sleep 30 & wait"}, dir, os.Environ(), "", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.signal(sigKill); c.wait(); c.release() }()
	if err := c.signal(sigResume); err != nil {
		t.Fatal(err)
	}
	if err := c.signal(sigPause); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the agent to stop", func() bool { st, _ := procState(c.pid()); return st == 'T' })
	if !groupLeftStopped(c.pid()) {
		t.Fatal("groupLeftStopped does not see the stopped group")
	}
	// The earlier resume's checks, run here to their end: they see the later pause and stop.
	c.mu.Lock()
	pauses := c.pauses
	c.mu.Unlock()
	c.settleResume(pauses - 1)
	if st, _ := procState(c.pid()); st != 'T' {
		t.Fatalf("a later pause was undone: state %c", st)
	}
}
