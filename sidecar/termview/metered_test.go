package termview

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// An agent routed through the model gateway: its spend shows in the block as each call is
// metered, during its turn, and what the finished turn reports is not counted again.
func TestLiveBlockMeteredSpend(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Mode: Mode{Live: true, Size: func() (int, int) { return 120, 30 }}, Location: time.UTC, Now: func() time.Time { return t0 }, Tick: time.Hour, Frame: -1})
	shown := func() string { return strings.Join(screen(out.Bytes()), "\n") }
	for _, e := range story()[:3] { // coder's turn started
		v.Event(e)
	}
	call := map[string]any{"agent": "coder", "midTurn": true, "callTokens": int64(1050), "callCostUsd": 0.0105}
	v.Event(ev(100, "build", "spend", call))
	v.Event(ev(200, "build", "spend", call))
	if s := shown(); !regexp.MustCompile(`(?m)^. coder\s+build\s+round 0\s+running\s+\S+\s+0 turns\s+2.1k tokens\s+\$0.02$`).MatchString(s) {
		t.Fatalf("block during coder's turn:\n%s", s)
	}
	v.Event(ev(300, "build", "agent_finished", map[string]any{"agent": "coder", "status": "completed", "turns": 2, "inputTokens": int64(2000), "outputTokens": int64(100), "costUsd": 0.5}))
	if s := shown(); !regexp.MustCompile(`(?m)^· coder\s+build\s+round 0\s+idle\s+\S+\s+1 turn\s+2.1k tokens\s+\$0.02$`).MatchString(s) {
		t.Fatalf("block after coder's turn (counted twice?):\n%s", s)
	}
	v.Close()
}
