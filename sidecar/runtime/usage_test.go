package runtime

import (
	"strings"
	"testing"
)

// A command agent reports what it spent on USAGE: lines: each is a usage event, the turn's
// result sums them, and none is part of the reply. A malformed one is a warning and stays
// text; "USAGE: prog [options]" is just text.
func TestCommandAgentReportsUsage(t *testing.T) {
	s := shellSpec(t, `cat >/dev/null
echo 'USAGE: {"inputTokens": 1000, "outputTokens": 200, "costUsd": 0.01}'
echo 'the answer'
echo 'USAGE: {"inputTokens": 500, "outputTokens": 100, "costUsd": 0.005}'
echo 'USAGE: prog [options]'
echo 'USAGE: {"inputTokens": -3}'`)
	evs, res := drain(t, start(t, s, "go"), nil)
	var usage []Event
	var warnings []string
	for _, e := range evs {
		switch e.Kind {
		case EventUsage:
			usage = append(usage, e)
		case EventWarning:
			warnings = append(warnings, e.Reason)
		}
	}
	if len(usage) != 2 || usage[0].Usage.InputTokens != 1000 || *usage[1].CostUSD != 0.005 {
		t.Fatalf("usage events %+v", usage)
	}
	if res.Usage.InputTokens != 1500 || res.Usage.OutputTokens != 300 || !res.CostKnown || res.CostUSD < 0.0149 || res.CostUSD > 0.0151 {
		t.Errorf("result usage %+v cost %g known %v", res.Usage, res.CostUSD, res.CostKnown)
	}
	if strings.Contains(res.Reply, `"inputTokens": 1000`) || !strings.Contains(res.Reply, "the answer") || !strings.Contains(res.Reply, "USAGE: prog [options]") {
		t.Errorf("reply %q", res.Reply)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "inputTokens is -3") || !strings.Contains(res.Reply, `"inputTokens": -3`) {
		t.Errorf("warnings %q, reply %q", warnings, res.Reply)
	}
}

// Tokens counts what budgets count, each token once: claude's result reports cache reads and
// writes apart from its input tokens (decoded here from a real result line's usage); codex
// counts cached tokens inside its input.
func TestUsageTokens(t *testing.T) {
	d := claudeBackend{}.newDecoder(&Spec{}, turnInput{})
	d.line([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"ok","usage":{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":100,"output_tokens":5}}`))
	if got := d.(*claudeDecoder).out.usage.Tokens(BackendClaude); got != 1115 {
		t.Errorf("claude: %d, want 1115 (10 input, 1000 cache reads, 100 cache writes, 5 output)", got)
	}
	u := Usage{InputTokens: 10, CachedInputTokens: 1000, CacheCreationTokens: 100, OutputTokens: 5}
	if got := u.Tokens(BackendCodex); got != 115 {
		t.Errorf("codex: %d", got)
	}
}

func FuzzParseUsageLine(f *testing.F) {
	for _, s := range []string{`USAGE: {"inputTokens": 1, "costUsd": 0.5}`, `USAGE: {}`, `USAGE: {"x": 1}`, "USAGE:", "usage: {}", `  USAGE: {"outputTokens": 9e99}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, cost, ok, err := parseUsageLine([]byte(s))
		if !ok && err != nil {
			t.Fatal("an error for a line that is not a USAGE line")
		}
		if ok && err == nil && (u.InputTokens < 0 || u.OutputTokens < 0 || (cost != nil && *cost < 0)) {
			t.Fatalf("accepted %q: %+v %v", s, u, cost)
		}
	})
}
