package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// newsFlow is P12 as its template draws it (a publisher, a broker node holding the rate
// limit, two subscribers), with params.ttl_s and the broker's rate limit given.
func newsFlow(pub, sub string, ttl, rate int) string {
	return `version: 0.2
agents:
  - {id: pub, role: publisher, runtime: {backendId: command, command: [bash, ` + pub + `]}}
  - {id: fast, role: subscriber, runtime: {backendId: command, command: [bash, ` + sub + `]}}
  - {id: slow, role: subscriber, runtime: {backendId: command, command: [bash, ` + sub + `]}}
systemNodes:
  - {id: broker, type: broker, params: {rate_limit_per_min: ` + strconv.Itoa(rate) + `}}
interactions:
  - id: news
    patternId: publish_subscribe
    edges:
      - {id: e_pub, source: pub, target: broker, data: {termination: {type: timeout_ms, ms: 120000}, params: {topics: [updates], ttl_s: ` + strconv.Itoa(ttl) + `}}}
      - {id: e_fast, source: broker, target: fast, data: {termination: {type: timeout_ms, ms: 120000}}}
      - {id: e_slow, source: broker, target: slow, data: {termination: {type: timeout_ms, ms: 120000}}}
`
}

// subscriberScript records every prompt of the subscriber in dir/<id>.prompts; the slow one
// works on u1 for 1.5 s.
func subscriberScript(t *testing.T, dir string) string {
	return script(t, dir, "sub.sh", `prompt=$(cat)
printf '%s\n----\n' "$prompt" >> `+dir+`/$AGENTCANVAS_AGENT_ID.prompts
if [ "$AGENTCANVAS_AGENT_ID" = slow ] && grep -q 'u1' <<<"$prompt"; then sleep 1.5; fi
echo noted
`)
}

// The envelope's ttl is a message's life from when it was sent, checked when its reader gets
// to it (patterns/P12: an event older than ttl_s when it is received is dropped). The broker
// passes one event per 200 ms: u1 goes at once, u2 and u3 are held. A subscriber reads each
// event as soon as the limit lets it through, not after every held one is out: both read u1,
// which was never held. The slow subscriber works on u1 for 1.5 s, past u2's and u3's
// one-second ttl: they expire for it (an event and a warning each) and never reach it. Every
// held message is told the time it goes, one window after the one before, and goes then.
func TestTTLCountsWhileTheMessageWaitsForItsReader(t *testing.T) {
	dir := t.TempDir()
	pub := script(t, dir, "pub.sh", "cat >/dev/null\nprintf 'PUBLISH updates: u1\\nPUBLISH updates: u2\\nPUBLISH updates: u3\\n'\n")
	ws, f := workspace(t, newsFlow(pub, subscriberScript(t, dir), 1, 1))
	out, err := Run(context.Background(), f, Options{Workspace: ws, Limits: recording, rateWindow: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	evs := events(t, ws, f.Name)
	notes := map[string]string{} // notification id → its text
	for _, e := range eventsNamed(evs, "message") {
		if fld(e, "type") == "notification" {
			notes[str(fld(e, "id"))] = "u" + strconv.Itoa(len(notes)+1)
		}
	}
	for _, who := range []string{"fast", "slow"} {
		b, _ := os.ReadFile(filepath.Join(dir, who+".prompts"))
		if !strings.Contains(string(b), "u1") {
			t.Errorf("%s never read u1, which the limit never held:\n%s", who, b)
		}
	}
	slow, _ := os.ReadFile(filepath.Join(dir, "slow.prompts"))
	if strings.Contains(string(slow), "u2") || strings.Contains(string(slow), "u3") {
		t.Errorf("the slow subscriber read an event past its ttl:\n%s", slow)
	}
	expired := map[string]bool{}
	for _, e := range eventsNamed(evs, "message_expired") {
		if fld(e, "to") == "slow" && fld(e, "ttlS") == float64(1) {
			expired[notes[str(fld(e, "id"))]] = true
		}
	}
	if !expired["u2"] || !expired["u3"] || expired["u1"] {
		t.Errorf("expired for slow: %v; want u2 and u3", expired)
	}
	warned := 0
	for _, e := range eventsNamed(evs, "warning") {
		if fld(e, "agent") == "slow" && strings.Contains(str(fld(e, "message")), "expired before slow read it") {
			warned++
		}
	}
	if warned < 2 {
		t.Errorf("%d warnings for the expired events, want one each", warned)
	}
	// releaseAt: u2's one window after u3's… each one window after the one before, and each
	// released no earlier than it said.
	var at []time.Time
	for _, e := range eventsNamed(evs, "message_held") {
		ra, err := time.Parse(time.RFC3339Nano, str(fld(e, "releaseAt")))
		if err != nil {
			t.Fatal(err)
		}
		at = append(at, ra)
		for _, r := range eventsNamed(evs, "message_released") {
			if fld(r, "id") == fld(e, "id") && r.TS < ra.UnixMilli() {
				t.Errorf("%s released at %d, before its releaseAt %s", notes[str(fld(e, "id"))], r.TS, ra)
			}
		}
	}
	if len(at) != 2 {
		t.Fatalf("%d held, want u2 and u3", len(at))
	}
	if d := at[1].Sub(at[0]); d < 199*time.Millisecond || d > 201*time.Millisecond {
		t.Errorf("u3 goes %v after u2, want one window (200ms)", d)
	}
	if ic := out.Interactions[0]; !strings.Contains(ic.Result, "expired") {
		t.Errorf("result %q says nothing of what expired", ic.Result)
	}
}

// An interaction whose every message expired did nothing: it fails (reason expired) rather
// than complete with nothing delivered. The broker's one token goes to an event nobody
// subscribes to; the subscribers' event waits 1.5 s for the next, past its one-second ttl.
func TestEveryMessageExpiredIsNoSuccess(t *testing.T) {
	dir := t.TempDir()
	pub := script(t, dir, "pub.sh", "cat >/dev/null\nprintf 'PUBLISH elsewhere: u0\\nPUBLISH updates: u1\\n'\n")
	ws, f := workspace(t, newsFlow(pub, subscriberScript(t, dir), 1, 1))
	out, err := Run(context.Background(), f, Options{Workspace: ws, Limits: recording, rateWindow: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ic := out.Interactions[0]
	if out.Status != StatusFailed || ic.Status != StatusFailed || ic.Reason != "expired" || !strings.Contains(ic.Error, "every event expired") {
		t.Fatalf("run %s, interaction %s (%s): %s", out.Status, ic.Status, ic.Reason, ic.Error)
	}
	if n := len(eventsNamed(events(t, ws, f.Name), "message_expired")); n != 2 {
		t.Errorf("%d message_expired, want one per subscriber", n)
	}
}
