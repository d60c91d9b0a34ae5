package termview

import (
	"encoding/json"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// BenchmarkLiveEvent: what an engine event costs the engine (which waits for its sink) on a
// live view of 20 agents — redrawn once a frame (view) or at every event — against a JSON
// encoder's cost for the same events (the --json path).
func BenchmarkLiveEvent(b *testing.B) {
	nodes := make([]string, 20)
	for i := range nodes {
		nodes[i] = "worker-" + strconv.Itoa(i)
	}
	event := func(i int) eventlog.Event {
		n := nodes[i%len(nodes)]
		if i%2 == 0 {
			return ev(2+i, "vote", "agent_started", map[string]any{"agent": n, "round": i / 40, "backend": "claude"})
		}
		return ev(2+i, "vote", "agent_finished", map[string]any{"agent": n, "status": "completed", "turns": 1, "inputTokens": int64(1200), "outputTokens": int64(80), "costUsd": 0.01})
	}
	for _, c := range []struct {
		name  string
		frame time.Duration
	}{{"view", 0}, {"view-every-event", -1}} {
		b.Run(c.name, func(b *testing.B) {
			v := New(io.Discard, Options{Mode: Mode{Live: true, Color: true, Size: func() (int, int) { return 160, 50 }}, Tick: time.Hour, Frame: c.frame})
			defer v.Close()
			v.Event(ev(0, "", "run_started", map[string]any{"interactions": 1}))
			v.Event(ev(1, "vote", "interaction_started", map[string]any{"patternId": "majority_vote", "nodes": nodes}))
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				v.Event(event(i))
			}
		})
	}
	b.Run("json", func(b *testing.B) {
		enc := json.NewEncoder(io.Discard)
		b.ReportAllocs()
		for i := range b.N {
			enc.Encode(event(i))
		}
	})
}
