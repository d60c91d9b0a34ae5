package bus

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The signed content is exactly json.Marshal of the envelope without its signature, written
// by hand: every field, omitempty, one recipient or many, payloads of any type, odd times.
func TestCanonicalIsJSONMarshal(t *testing.T) {
	deadline := time.Date(2026, 3, 4, 5, 6, 7, 890, time.FixedZone("x", -5*3600))
	far := time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)
	envs := []Envelope{
		{},
		{ID: "msg_1", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Version: Version, From: "a", To: Recipients{"b"}, Type: "reply", Priority: "medium",
			Payload: map[string]any{"text": "<b> & \"quotes\"\n", "bytes": 12, "list": []any{1, "x", nil}}, Context: Context{InteractionID: "i1", ThreadID: "run/i1"}},
		{ID: "msg_2", Timestamp: deadline, From: "a", To: Recipients{"b", "c"}, Type: "vote", Payload: "plain", Context: Context{Issue: "X-1", ParentMessageID: "msg_1", Environment: "dev", EdgeID: "e1"},
			Options: &Options{RequiresResponse: true, ResponseDeadline: &deadline, Retryable: true, TTL: 30}},
		{ID: "msg_3", To: Recipients{}, Payload: Compressed{Compressed: true, Encoding: "gzip", Data: "AAAA"}, Options: &Options{}, Signature: "hmac-sha256:x"},
		{ID: "msg_4", To: nil, Payload: 1.5, Options: &Options{ResponseDeadline: &far}},
		{ID: "msg_5", Timestamp: far, Payload: map[string]string{"k": "\u2028"}},
	}
	for i, e := range envs {
		c := e
		c.Signature = ""
		want, _ := json.Marshal(&c)
		if got := e.canonical(); string(got) != string(want) {
			t.Errorf("envelope %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// A message whose routing fields are altered in transit fails verification too.
func TestSignatureCoversEveryField(t *testing.T) {
	key := NewKey()
	alter := []func(e *Envelope){
		func(e *Envelope) { e.From = "c" },
		func(e *Envelope) { e.To = Recipients{"c"} },
		func(e *Envelope) { e.Type = "vote" },
		func(e *Envelope) { e.Priority = "critical" },
		func(e *Envelope) { e.Timestamp = e.Timestamp.Add(time.Nanosecond) },
		func(e *Envelope) { e.Context.ParentMessageID = "msg_0" },
		func(e *Envelope) { e.Options.TTL = 0 },
		func(e *Envelope) { e.Payload.(map[string]any)["n"] = 2 },
	}
	for i, f := range alter {
		e := &Envelope{ID: "msg_1", Timestamp: time.Now(), Version: Version, From: "a", To: Recipients{"b"}, Type: "reply", Priority: "medium",
			Payload: map[string]any{"n": 1}, Options: &Options{TTL: 60}}
		e.Sign(key)
		if err := e.Verify(key); err != nil {
			t.Fatalf("unaltered: %v", err)
		}
		f(e)
		if e.Verify(key) == nil {
			t.Errorf("alteration %d not detected", i)
		}
	}
}

// A compressed payload is restored after a JSON round trip too (a map then); any other map
// payload is left as it is.
func TestDecompressAfterJSONRoundTrip(t *testing.T) {
	big := map[string]any{"text": strings.Repeat("y", CompressThreshold*2)}
	e := &Envelope{ID: "m", Payload: big}
	if err := e.Compress(); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(e)
	var back Envelope
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Payload.(map[string]any); !ok {
		t.Fatalf("payload after the round trip is %T", back.Payload)
	}
	if err := back.Decompress(); err != nil {
		t.Fatal(err)
	}
	if m, ok := back.Payload.(map[string]any); !ok || m["text"] != big["text"] {
		t.Fatal("payload not restored")
	}
	for _, p := range []map[string]any{{"text": "hi"}, {"compressed": false, "data": "x"}, {"compressed": "true"}} {
		e := &Envelope{Payload: p}
		if err := e.Decompress(); err != nil || !reflect.DeepEqual(e.Payload, p) {
			t.Errorf("payload %v changed to %v (%v)", p, e.Payload, err)
		}
	}
}
