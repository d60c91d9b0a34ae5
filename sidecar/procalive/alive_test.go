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
