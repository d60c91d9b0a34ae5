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
