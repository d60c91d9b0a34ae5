package termview

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The run's first lines say which agents got the default limit on model calls, and how to
// change it.
func TestDefaultLimitLine(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Location: time.UTC, Now: func() time.Time { return t0 }})
	v.Event(ev(0, "", "run_started", map[string]any{"interactions": 1, "defaultLimit": map[string]any{"maxModelCalls": 200, "agents": []string{"coder"},
		"message": "coder: at most 200 model calls each over the run (the default …: runtime.maxModelCalls raises it, 0 removes it)"}}))
	v.Close()
	if !strings.Contains(out.String(), "limit: coder: at most 200 model calls each over the run") {
		t.Errorf("no limit line in:\n%s", out.String())
	}
}

// The run's first lines say the flow's own spend limit (policy.budget), in words.
func TestBudgetLine(t *testing.T) {
	for budget, want := range map[string]map[string]any{
		"limit: the run stops at $5.00 or 2M tokens spent (policy.budget)": {"usd": 5.0, "tokens": int64(2_000_000)},
		"limit: the run stops at 150k tokens spent (policy.budget)":        {"tokens": 150_000},
	} {
		var out bytes.Buffer
		v := New(&out, Options{Location: time.UTC, Now: func() time.Time { return t0 }})
		v.Event(ev(0, "", "run_started", map[string]any{"interactions": 1, "budget": want}))
		v.Close()
		if !strings.Contains(out.String(), budget) {
			t.Errorf("no %q in:\n%s", budget, out.String())
		}
	}
}
