package runtime

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
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

// BenchmarkConfinementOverhead: what confinement adds to a supervised no-op turn of a run's
// agent (the policy built, the guardian's thread restricted, the agent forked from it), turns
// with and without it run alternately so machine load affects both alike. Reports
// unconfined-ns/turn, confined-ns/turn and their ratio.
func BenchmarkConfinementOverhead(b *testing.B) {
	if !confine.Probe().Available() {
		b.Skip("no Landlock here")
	}
	ws := b.TempDir()
	prompt := strings.Repeat("x", 3000)
	turn := func(mode confine.Mode) time.Duration {
		start := time.Now()
		p, err := Start(context.Background(), Spec{RunID: "bench", AgentID: "a", BackendID: BackendCommand, Command: benchNoop, Workspace: ws, Confine: mode}, prompt)
		if err != nil {
			b.Fatal(err)
		}
		for range p.Events() {
		}
		if res := p.Wait(); res.Status != StatusCompleted {
			b.Fatalf("%s: %s", res.Status, res.Reason)
		}
		return time.Since(start)
	}
	defer RemoveTemp("bench")
	var off, on time.Duration
	for b.Loop() {
		off += turn(confine.ModeOff)
		on += turn(confine.ModeRequired)
	}
	n := float64(b.N)
	b.ReportMetric(float64(off.Nanoseconds())/n, "unconfined-ns/turn")
	b.ReportMetric(float64(on.Nanoseconds())/n, "confined-ns/turn")
	b.ReportMetric(float64(on)/float64(off), "ratio")
}

// BenchmarkConfinementCPU: the CPU time (the sidecar's, its guardians' and the agents', all
// reaped) of no-op turns of a run's agent, unconfined then confined, each a run of its own
// of phaseTurns turns whose guardians (and world) are started with it and ended with it. CPU
// time, unlike wall time, hardly depends on what else the machine runs. Reports
// unconfined-cpu-ns/turn, confined-cpu-ns/turn and their ratio.
func BenchmarkConfinementCPU(b *testing.B) {
	if !confine.Probe().Available() {
		b.Skip("no Landlock here")
	}
	ws := b.TempDir()
	prompt := strings.Repeat("x", 3000)
	phase := func(run string, mode confine.Mode, n int) time.Duration {
		before := cpuTime()
		for range n {
			p, err := Start(context.Background(), Spec{RunID: run, AgentID: "a", BackendID: BackendCommand, Command: benchNoop, Workspace: ws, Confine: mode}, prompt)
			if err != nil {
				b.Fatal(err)
			}
			for range p.Events() {
			}
			if res := p.Wait(); res.Status != StatusCompleted {
				b.Fatalf("%s: %s", res.Status, res.Reason)
			}
		}
		RemoveTemp(run)
		waitGuardiansReaped(b)
		return cpuTime() - before
	}
	const phaseTurns = 100
	var off, on time.Duration
	for b.Loop() {
		off += phase("bench-off", confine.ModeOff, phaseTurns)
		on += phase("bench-on", confine.ModeRequired, phaseTurns)
	}
	n := float64(b.N * phaseTurns)
	b.ReportMetric(float64(off.Nanoseconds())/n, "unconfined-cpu-ns/turn")
	b.ReportMetric(float64(on.Nanoseconds())/n, "confined-cpu-ns/turn")
	b.ReportMetric(float64(on)/float64(off), "ratio")
}

// cpuTime is the user and system time of this process and its reaped children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// waitGuardiansReaped waits until every guardian the sidecar started has been reaped.
func waitGuardiansReaped(b *testing.B) {
	idleGuardians.Lock()
	idle := idleGuardians.list
	idleGuardians.list = nil
	idleGuardians.Unlock()
	for _, g := range idle {
		g.dismiss()
	}
	for {
		ourChildren.Lock()
		n := len(ourChildren.m)
		ourChildren.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
