package bus

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func msg(from string, to ...string) *Envelope {
	return &Envelope{From: from, To: to, Type: "information", Payload: "hi"}
}

func TestRateLimitHoldsUnderBurst(t *testing.T) {
	c := newClock()
	b := New(Config{Topology: "broker", Members: []string{"pub", "sub"}, Hub: "broker", Now: c.now})
	// What reaches the broker itself is not held (it passes on nothing): the limit counts
	// what it sends on.
	for i := 0; i < 25; i++ {
		if _, err := b.Send(&Envelope{From: "pub", To: Recipients{"broker"}, Type: "publish", Payload: i}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := b.Receive("broker"); len(got) != 25 {
		t.Fatalf("the broker got %d of 25 publishes at once", len(got))
	}
	for i := 0; i < 25; i++ {
		if _, err := b.Send(&Envelope{From: "broker", To: Recipients{"sub"}, Type: "notification", Payload: i}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := b.Receive("sub")
	if len(got) != DefaultRateLimitPerMin {
		t.Fatalf("first minute delivered %d, want %d", len(got), DefaultRateLimitPerMin)
	}
	c.advance(30 * time.Second)
	got, _ = b.Receive("sub")
	if len(got) != 5 {
		t.Fatalf("after 30s delivered %d, want 5", len(got))
	}
	c.advance(time.Minute)
	got, _ = b.Receive("sub")
	if len(got) != 10 || b.Pending() != 0 {
		t.Fatalf("after 90s delivered %d (pending %d), want the last 10", len(got), b.Pending())
	}
	if got[9].Payload.(int) != 24 {
		t.Errorf("order lost: last payload %v", got[9].Payload)
	}
}

func TestExpiredNotDelivered(t *testing.T) {
	c := newClock()
	b := New(Config{Topology: "p2p", Members: []string{"a", "b"}, Now: c.now})
	e := msg("a", "b")
	e.Options = &Options{TTL: 60}
	b.Send(e)
	b.Send(msg("a", "b"))
	c.advance(61 * time.Second)
	got, _ := b.Receive("b")
	if len(got) != 1 || got[0].Options != nil {
		t.Fatalf("got %d messages; the expired one must not be delivered", len(got))
	}
	if b.Metrics().Expired != 1 {
		t.Errorf("expired not counted: %+v", b.Metrics())
	}
}

func TestSignedMessageAlteredIsRejected(t *testing.T) {
	b := New(Config{Topology: "p2p", Members: []string{"a", "b"}, Key: NewKey()})
	b.Send(msg("a", "b"))
	b.Send(msg("a", "b"))
	b.boxes["b"][0].Payload = "tampered" // in transit
	got, rejected := b.Receive("b")
	if len(got) != 1 || len(rejected) != 1 || !strings.Contains(rejected[0].Error(), "altered") {
		t.Fatalf("got %d, rejected %v", len(got), rejected)
	}
}

func TestACLRefusesAndCounts(t *testing.T) {
	b := New(Config{Topology: "p2p", Members: []string{"a", "b"}, ACL: map[string][]Rule{"a": {{Types: []string{"question"}, To: []string{"b"}}}}})
	if _, err := b.Send(&Envelope{From: "a", To: Recipients{"b"}, Type: "question", Payload: "?"}); err != nil {
		t.Fatal(err)
	}
	_, err := b.Send(&Envelope{From: "a", To: Recipients{"b"}, Type: "task_assignment", Payload: "x"})
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("err = %v", err)
	}
	if _, err := b.Send(msg("b", "a")); !errors.Is(err, ErrDenied) {
		t.Fatalf("b has no rule: err = %v", err)
	}
	if m := b.Metrics(); m.Refused != 2 || m.ErrorRate == 0 {
		t.Errorf("metrics = %+v", m)
	}
}

func TestRoutingByTopology(t *testing.T) {
	mw := New(Config{Topology: "manager_worker", Members: []string{"m", "w1", "w2"}, Hub: "m"})
	if _, err := mw.Send(msg("w1", "w2")); !errors.Is(err, ErrRoute) {
		t.Errorf("worker to worker: %v", err)
	}
	if to, err := mw.Send(msg("m", "*")); err != nil || fmt.Sprint(to) != "[w1 w2]" {
		t.Errorf("manager broadcast: %v %v", to, err)
	}
	p := New(Config{Topology: "pipeline", Members: []string{"a", "b", "c"}, Stages: []string{"a", "b", "c"}})
	if _, err := p.Send(msg("a", "c")); !errors.Is(err, ErrRoute) {
		t.Errorf("pipeline skip: %v", err)
	}
	if _, err := p.Send(msg("b", "c")); err != nil {
		t.Error(err)
	}
	// A drawn edge is a route both ways, whatever the topology says.
	pl := New(Config{Topology: "pipeline", Members: []string{"a", "b", "c"}, Stages: []string{"a", "b", "c"}, Links: [][2]string{{"c", "a"}}})
	if _, err := pl.Send(msg("c", "a")); err != nil {
		t.Errorf("feedback edge refused: %v", err)
	}
	if _, err := pl.Send(msg("a", "c")); err != nil {
		t.Errorf("reply along a drawn edge refused: %v", err)
	}
	r := New(Config{Topology: "router_targeted", Members: []string{"x", "y", "z"}, Hub: "router", Tags: map[string][]string{"y": {"reviewer"}, "z": {"reviewer", "tester"}}, RateLimitPerMin: -1})
	if to, err := r.Send(msg("x", "tag:reviewer")); err != nil || fmt.Sprint(to) != "[y z]" {
		t.Errorf("tags: %v %v", to, err)
	}
	ps := New(Config{Topology: "broker", Members: []string{"pub", "s1", "s2"}, RateLimitPerMin: -1})
	ps.Subscribe("s1", "news")
	if to, err := ps.Send(&Envelope{From: "pub", To: Recipients{"topic:news"}, Type: "publish", Payload: 1}); err != nil || fmt.Sprint(to) != "[s1]" {
		t.Errorf("pub/sub: %v %v", to, err)
	}
	if _, err := ps.Send(msg("pub", "nobody")); !errors.Is(err, ErrNoRecipient) {
		t.Errorf("unknown recipient: %v", err)
	}
}

func TestVersionAndPriority(t *testing.T) {
	b := New(Config{Topology: "p2p", Members: []string{"a", "b"}})
	e := msg("a", "b")
	e.Version = "2.0.0"
	if _, err := b.Send(e); err == nil || !strings.Contains(err.Error(), "major") {
		t.Errorf("v2 accepted: %v", err)
	}
	low, crit := msg("a", "b"), msg("a", "b")
	low.Priority, crit.Priority = "low", "critical"
	b.Send(low)
	b.Send(crit)
	got, _ := b.Receive("b")
	if got[0].Priority != "critical" {
		t.Errorf("priority order: %s first", got[0].Priority)
	}
}

func TestCompressionRoundTrip(t *testing.T) {
	b := New(Config{Topology: "p2p", Members: []string{"a", "b"}, Key: NewKey()})
	big := strings.Repeat("x", CompressThreshold*2)
	b.Send(&Envelope{From: "a", To: Recipients{"b"}, Type: "information", Payload: big})
	if c, ok := b.boxes["b"][0].Payload.(Compressed); !ok || len(c.Data) > len(big)/10 {
		t.Fatalf("payload not compressed in transit")
	}
	got, rej := b.Receive("b")
	if len(rej) != 0 || got[0].Payload != big {
		t.Fatalf("payload not restored: %v", rej)
	}
}

func TestResponseTimeMetrics(t *testing.T) {
	c := newClock()
	b := New(Config{Topology: "p2p", Members: []string{"a", "b"}, Now: c.now})
	q := &Envelope{From: "a", To: Recipients{"b"}, Type: "question", Payload: "?", Options: &Options{RequiresResponse: true}}
	b.Send(q)
	c.advance(2 * time.Second)
	b.Send(&Envelope{From: "b", To: Recipients{"a"}, Type: "reply", Payload: "!", Context: Context{ParentMessageID: q.ID}})
	m := b.Metrics()
	if m.AverageResponseTime != 2000 || m.AgentActivity["b"].AvgResponseTime != 2000 || m.MessagesByType["question"] != 1 {
		t.Errorf("metrics = %+v", m)
	}
}

func TestBlackboardRetention(t *testing.T) {
	c := newClock()
	bb := NewBlackboard(Retention{KeepLastN: 3}, c.now)
	for i := 0; i < 5; i++ {
		bb.Post("a", "note", fmt.Sprint(i))
	}
	if e := bb.Entries(); len(e) != 3 || e[0].Text != "2" || bb.Trimmed() != 2 {
		t.Fatalf("keep_last_n: %+v", e)
	}
	bd := NewBlackboard(Retention{KeepLastDays: 1}, c.now)
	bd.Post("a", "note", "old")
	c.advance(25 * time.Hour)
	bd.Post("a", "note", "new")
	if e := bd.Entries(); len(e) != 1 || e[0].Text != "new" {
		t.Fatalf("keep_last_days: %+v", e)
	}
}

func TestNoMessageLostUnderConcurrency(t *testing.T) {
	const agents, perAgent = 50, 200
	ids := make([]string, agents)
	for i := range ids {
		ids[i] = fmt.Sprintf("a%02d", i)
	}
	b := New(Config{Topology: "p2p", Members: ids})
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for n := 0; n < perAgent; n++ {
				if _, err := b.Send(msg(ids[i], ids[(i+1+n%(agents-1))%agents])); err != nil {
					t.Error(err)
				}
			}
		}(i)
	}
	wg.Wait()
	total := 0
	for _, id := range ids {
		got, _ := b.Receive(id)
		total += len(got)
	}
	if total != agents*perAgent {
		t.Fatalf("received %d of %d", total, agents*perAgent)
	}
}

// BenchmarkFiftyAgentsTenThousandMessages: 50 agents exchanging 10,000 messages, none lost.
func BenchmarkFiftyAgentsTenThousandMessages(bm *testing.B) {
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = fmt.Sprintf("a%02d", i)
	}
	for bm.Loop() {
		b := New(Config{Topology: "p2p", Members: ids, Key: NewKey()})
		for n := 0; n < 10_000; n++ {
			b.Send(msg(ids[n%50], ids[(n+1)%50]))
		}
		total := 0
		for _, id := range ids {
			got, _ := b.Receive(id)
			total += len(got)
		}
		if total != 10_000 {
			bm.Fatalf("lost messages: %d", total)
		}
	}
}

// Every message the rate limit holds is observed held, then released in send order once
// tokens come back (the window set short here, the clock injected); none is lost. What is
// still held when the interaction ends is observed dropped; a message past its ttl, expired.
func TestRateLimitEventsHeldReleasedDropped(t *testing.T) {
	c := newClock()
	var evs []Event
	b := New(Config{Topology: "router_targeted", Members: []string{"a", "b"}, Hub: "router", RateLimitPerMin: 2, Window: time.Second, Now: c.now,
		Observe: func(e Event) { evs = append(evs, e) }})
	for i := 0; i < 5; i++ {
		if _, err := b.Send(&Envelope{From: "a", To: Recipients{"b"}, Type: "information", Payload: i}); err != nil {
			t.Fatal(err)
		}
	}
	kinds := func() (out []string) {
		for _, e := range evs {
			out = append(out, fmt.Sprintf("%s:%v", e.Kind, e.Envelope.Payload))
		}
		return out
	}
	if got := strings.Join(kinds(), " "); got != "held:2 held:3 held:4" {
		t.Fatalf("events %s", got)
	}
	if evs[0].ReleaseAt.Sub(c.now()) != 500*time.Millisecond {
		t.Errorf("release at +%v, want +500ms (2 a second)", evs[0].ReleaseAt.Sub(c.now()))
	}
	c.advance(time.Second)
	if held := b.Release(); held != 1 {
		t.Fatalf("%d still held, want 1", held)
	}
	got, _ := b.Receive("b")
	if len(got) != 4 || got[3].Payload.(int) != 3 {
		t.Fatalf("received %d, last %v", len(got), got[len(got)-1].Payload)
	}
	if dropped := b.DropHeld("the interaction ended"); len(dropped) != 1 {
		t.Fatalf("dropped %d", len(dropped))
	}
	if got := strings.Join(kinds(), " "); got != "held:2 held:3 held:4 released:2 released:3 dropped:4" {
		t.Fatalf("events %s", got)
	}
	e := msg("a", "b")
	e.Options = &Options{TTL: 1}
	c.advance(time.Minute) // tokens back
	b.Send(e)
	c.advance(2 * time.Second)
	b.Receive("b")
	if last := evs[len(evs)-1]; last.Kind != Expired || last.Recipient != "b" {
		t.Fatalf("last event %+v, want expired for b", last)
	}
}

// Every held message is told when it can go: the k-th behind the limit needs k tokens to
// come back after the one the first is waiting for (2 a second: +500 ms, +1 s, +1.5 s), and a
// message sent once some time has passed counts what came back meanwhile.
func TestReleaseAtOfEveryHeldMessage(t *testing.T) {
	c := newClock()
	var at []time.Duration
	b := New(Config{Topology: "router_targeted", Members: []string{"a", "b"}, Hub: "router", RateLimitPerMin: 2, Window: time.Second, Now: c.now,
		Observe: func(e Event) {
			if e.Kind == Held {
				at = append(at, e.ReleaseAt.Sub(newClock().t))
			}
		}})
	for i := 0; i < 5; i++ {
		b.Send(&Envelope{From: "a", To: Recipients{"b"}, Type: "information", Payload: i})
	}
	c.advance(250 * time.Millisecond)
	b.Send(&Envelope{From: "a", To: Recipients{"b"}, Type: "information", Payload: 5})
	want := []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second}
	if fmt.Sprint(at) != fmt.Sprint(want) {
		t.Fatalf("releaseAt %v, want %v", at, want)
	}
	// Each is released at the time it was told, not before.
	for i, d := range want {
		c.t = newClock().t.Add(d - time.Millisecond)
		if held := b.Release(); held != len(want)-i {
			t.Fatalf("at %v: %d held, want %d", d-time.Millisecond, held, len(want)-i)
		}
		c.t = newClock().t.Add(d)
		if held := b.Release(); held != len(want)-i-1 {
			t.Fatalf("at %v: %d held, want %d", d, held, len(want)-i-1)
		}
	}
}

// ReceiveNext gives a reader one message at a time, the most urgent first, and checks each
// one's ttl when the reader gets to it: a reader busy with the first past the second's ttl
// finds the second expired.
func TestReceiveNextChecksAgeWhenRead(t *testing.T) {
	c := newClock()
	var expired []string
	b := New(Config{Topology: "p2p", Members: []string{"a", "b"}, Now: c.now, Observe: func(e Event) {
		if e.Kind == Expired {
			expired = append(expired, fmt.Sprint(e.Envelope.Payload))
		}
	}})
	low := &Envelope{From: "a", To: Recipients{"b"}, Type: "information", Payload: "low", Priority: "low", Options: &Options{TTL: 10}}
	crit := &Envelope{From: "a", To: Recipients{"b"}, Type: "information", Payload: "critical", Priority: "critical", Options: &Options{TTL: 10}}
	b.Send(low)
	b.Send(crit)
	m, _, ok := b.ReceiveNext("b")
	if !ok || m.Payload != "critical" {
		t.Fatalf("first %v %v, want the critical one", m, ok)
	}
	c.advance(11 * time.Second) // b works on it past the other's ttl
	if m, _, ok := b.ReceiveNext("b"); ok {
		t.Fatalf("got %v, want it expired", m.Payload)
	}
	if fmt.Sprint(expired) != "[low]" || b.Metrics().Expired != 1 {
		t.Fatalf("expired %v, metrics %+v", expired, b.Metrics())
	}
}
