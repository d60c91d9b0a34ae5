package runtime

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

var benchNoop = []string{"dd", "of=/dev/null", "status=none"}

// BenchmarkSupervisedTurn: one no-op command-agent turn through Start (guardian included).
func BenchmarkSupervisedTurn(b *testing.B) {
	ws := b.TempDir()
	prompt := strings.Repeat("x", 3000)
	for b.Loop() {
		p, err := Start(context.Background(), Spec{AgentID: "a", BackendID: BackendCommand, Command: benchNoop, Workspace: ws}, prompt)
		if err != nil {
			b.Fatal(err)
		}
		for range p.Events() {
		}
		p.Wait()
	}
}

// BenchmarkDirectSpawn: the same process spawned with os/exec, for comparison.
func BenchmarkDirectSpawn(b *testing.B) {
	prompt := strings.Repeat("x", 3000)
	for b.Loop() {
		cmd := exec.Command(benchNoop[0], benchNoop[1:]...)
		cmd.Stdin = strings.NewReader(prompt)
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
