package procalive

import (
	"os"
	"os/exec"
	"testing"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	if Alive(0) || Alive(-1) {
		t.Fatal("pid 0 or -1 reported alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(cmd.Process.Pid) {
		t.Fatalf("process %d ended and was reaped, yet reported alive", cmd.Process.Pid)
	}
}

// A process id given to another process since is not the recorded process any more: a run
// killed long ago whose id now belongs to something else is dead.
func TestSameTellsAReusedProcessID(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	start, ok := StartTime(cmd.Process.Pid)
	if !ok {
		t.Skip("no process start times here")
	}
	if own, _ := StartTime(os.Getpid()); own == 0 || own > start {
		t.Fatalf("start times: this process %d, its child %d", own, start)
	}
	if !Same(cmd.Process.Pid, start) || !Same(cmd.Process.Pid, 0) {
		t.Fatal("the process itself is not the same process")
	}
	if Same(cmd.Process.Pid, start+1) {
		t.Fatal("a process that started at another time is taken for the recorded one")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if Same(cmd.Process.Pid, start) {
		t.Fatal("a process that ended is the same")
	}
}
