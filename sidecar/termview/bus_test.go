package termview

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Messages the bus held, released, let expire or dropped, and a refused dependency value,
// each have a line: the person sees why a message came late or never.
func TestBusAndDependencyLines(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Location: time.UTC, Now: func() time.Time { return t0 }})
	for _, e := range []struct {
		name   string
		fields map[string]any
	}{
		{"message_held", map[string]any{"id": "m1", "from": "peer_1", "to": []string{"peer_2"}, "type": "targeted_message"}},
		{"message_released", map[string]any{"id": "m1", "from": "peer_1", "to": []string{"peer_2"}, "type": "targeted_message"}},
		{"message_expired", map[string]any{"id": "m2", "from": "broker", "to": "sub_1", "type": "notification", "ttlS": 60}},
		{"message_dropped", map[string]any{"id": "m3", "from": "peer_1", "to": []string{"peer_3"}, "type": "targeted_message", "reason": "the interaction ended before the rate limit let it through"}},
		{"dependency_invalid", map[string]any{"agent": "coder", "name": "SHORT_KEY", "error": "API key too short"}},
		{"dependency_requested", map[string]any{"agent": "coder", "fields": map[string]any{"type": "api_key", "name": "SHORT_KEY", "description": "the test service's key"}}},
		{"phase_completed", map[string]any{"agent": "coder", "fields": map[string]any{"N": "2"}}},
	} {
		v.Event(ev(0, "i1", e.name, e.fields))
	}
	v.Close()
	for _, want := range []string{
		"message targeted_message from peer_1 to peer_2 held by the rate limit",
		"message targeted_message from peer_1 to peer_2 released by the rate limit",
		"message notification from broker to sub_1 expired (ttl 60s)",
		"message targeted_message from peer_1 to peer_3 dropped: the interaction ended",
		"coder's dependency SHORT_KEY: the value given was refused (API key too short); asked again",
		`coder needs api_key "SHORT_KEY": the test service's key`,
		"coder completed phase 2 and waits",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line %q in:\n%s", want, out.String())
		}
	}
}
