package engine

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// noop is an agent that reads its prompt and answers with its last line: one process, one
// line out (a reply that said nothing would be asked again, and then fail the step).
var noop = []string{"tail", "-n", "1"}

// BenchmarkTurnOverhead measures the engine's cost per agent turn with a no-op command agent
// (a CAMEL pair that never finishes, bounded by max_rounds) against spawning the same
// process directly as many times with a prompt of the same size. Each iteration does both,
// alternately, so machine load affects both alike; it reports engine-ns/turn,
// direct-ns/turn and ratio (aim: ≤ 1.2), plus runtime-ns/turn (runtime.Start alone, the
// supervised spawn through the guardian) and engine/runtime, to tell the engine's own cost
// (prompts, log, checkpoints) from the runtime's.
func BenchmarkTurnOverhead(b *testing.B) {
	if _, err := exec.LookPath(noop[0]); err != nil {
		b.Skip("no " + noop[0])
	}
	const rounds = 25 // 50 turns a run
	ws := gitWorkspace(b)
	f := patternFlow(b, ws, "bench", flowSpec{pattern: "role_play_pair", description: "nothing",
		runtime: map[string]any{"kind": "cli", "backendId": "command", "command": noop},
		edit:    setTermination(pattern.Termination{Type: "max_rounds", Rounds: rounds})})
	prompt := ""
	var engine, direct, supervised time.Duration
	turns := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out, err := Run(context.Background(), f, Options{Workspace: ws, RoundCap: rounds})
		engine += time.Since(start)
		if err != nil || out.Interactions[0].Rounds != rounds {
			b.Fatalf("run: %v %+v", err, out)
		}
		if prompt == "" {
			prompt = strings.Repeat("x", 3000) // about the size of the engine's prompts
		}
		start = time.Now()
		for j := 0; j < 2*rounds; j++ {
			cmd := exec.Command(noop[0], noop[1:]...)
			cmd.Stdin = strings.NewReader(prompt)
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
		direct += time.Since(start)
		start = time.Now()
		for j := 0; j < 2*rounds; j++ {
			p, err := runtime.Start(context.Background(), runtime.Spec{RunID: "bench", AgentID: "a", BackendID: runtime.BackendCommand, Command: noop, Workspace: ws, CwdMode: runtime.CwdWorkspace}, prompt)
			if err != nil {
				b.Fatal(err)
			}
			for range p.Events() {
			}
			p.Wait()
		}
		supervised += time.Since(start)
		turns += 2 * rounds
	}
	b.StopTimer()
	e, d := float64(engine.Nanoseconds())/float64(turns), float64(direct.Nanoseconds())/float64(turns)
	b.ReportMetric(e, "engine-ns/turn")
	b.ReportMetric(d, "direct-ns/turn")
	r := float64(supervised.Nanoseconds()) / float64(turns)
	b.ReportMetric(r, "runtime-ns/turn") // runtime.Start alone: the supervised spawn (guardian)
	b.ReportMetric(e/d, "ratio")
	b.ReportMetric(e/r, "engine/runtime")
}
