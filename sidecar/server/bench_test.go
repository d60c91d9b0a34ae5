package server

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// Benchmarks (go test -run '^$' -bench . ./sidecar/server):
//
//	BenchmarkProcessStartVersion   `agentcanvas version`: the cost of starting the process
//	BenchmarkInitializeRoundTrip   start `agentcanvas serve`, initialize, shutdown, exit
//	BenchmarkDidChangeDiagnostics  didChange → publishDiagnostics on a 2,000-agent flow
//	BenchmarkTrivialRequests       sequential request round trips per second

func BenchmarkProcessStartVersion(b *testing.B) {
	bin := binary(b)
	for b.Loop() {
		if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "agentcanvas ") {
			b.Fatalf("version: %v %q", err, out)
		}
	}
}

func BenchmarkInitializeRoundTrip(b *testing.B) {
	binary(b)
	var cpu time.Duration
	for b.Loop() {
		c := startBinary(b)
		c.initialize("")
		c.shutdownExit()
		if code := c.waitExit(); code != 0 {
			b.Fatalf("exit code %d", code)
		}
		cpu += serverCPU(c)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-µs/op")
}

// serverCPU is the CPU time an exited server process used: on a busy machine a steadier
// measure of the server's own work than the wall-clock time of a round trip.
func serverCPU(c *client) time.Duration {
	return c.proc.ProcessState.UserTime() + c.proc.ProcessState.SystemTime()
}

// bigFlow is a flow with n agents chained by n-1 interactions.
func bigFlow(n int) string {
	var sb strings.Builder
	sb.WriteString("version: \"1.0\"\nagents:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "  - id: a%d\n    name: \"Agent %d\"\n    role: worker\n    runtime: {kind: cli, backendId: dry-run}\n", i, i)
	}
	sb.WriteString("interactions:\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&sb, "  - id: i%d\n    patternId: manager_worker\n    edges:\n      - source: a%d\n        target: a%d\n        data:\n          termination: {type: max_rounds, rounds: 2}\n", i, i-1, i)
	}
	return sb.String()
}

func BenchmarkDidChangeDiagnostics(b *testing.B) {
	text := bigFlow(2000)
	root := b.TempDir()
	uri := pathURI(root + "/flows/big.yaml")
	c := startBinary(b)
	c.initialize(root)
	c.open(uri, text, 1)
	c.diagnostics(uri, 1)
	b.SetBytes(int64(len(text)))
	// Each change renames the role of agent 0 back and forth ("worker" <-> "worked").
	line := uint32(3)
	col := uint32(len("    role: worke"))
	version := 1
	for b.Loop() {
		version++
		ch := "d"
		if version%2 == 0 {
			ch = "r"
		}
		c.change(uri, version, rangeChange(protocol.Range{Start: protocol.Position{Line: line, Character: col}, End: protocol.Position{Line: line, Character: col + 1}}, ch))
		c.diagnostics(uri, version)
	}
	b.StopTimer()
	c.shutdownExit()
	c.waitExit()
	// Includes the first analysis at didOpen: one more of the same work as an iteration.
	b.ReportMetric(float64(serverCPU(c).Milliseconds())/float64(b.N+1), "server-cpu-ms/op")
}

func BenchmarkTrivialRequests(b *testing.B) {
	c := startBinary(b)
	c.initialize("")
	params := map[string]any{"textDocument": map[string]any{"uri": "file:///nowhere/flows/x.yaml"}, "position": map[string]any{"line": 0, "character": 0}}
	for b.Loop() {
		if _, err := c.call("textDocument/hover", params); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.StopTimer()
	c.shutdownExit()
}
