package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// The rate limit of brokers and routers (spec §8: 10 messages a minute by default) holds a
// message rather than drop it. The engine waits for the bus to let held messages through
// before it goes on with what they carry (the broker's next forward, the router's next
// round), so the agents see every message, later; a message still held when the interaction
// ends is dropped, and says so. Every held, released, expired and dropped message is an
// event (busEvent).

// rateLimit is the interaction's messages per minute: a broker or router node's own
// params.rate_limit_per_min covers every edge through it (the node wins over its edges);
// else the edges' setting; 0 leaves the bus's default.
func (c *ictx) rateLimit() int {
	if v, ok := pattern.Number(c.nodeParam("rate_limit_per_min", "router", "broker")); ok && v != 0 {
		return int(v)
	}
	return intParam(c.params, "rate_limit_per_min", 0)
}

// nodeParam is a param set on one of the interaction's system nodes of the given types (nil
// when none sets it): such a node's setting covers every edge through it.
func (c *ictx) nodeParam(key string, types ...string) any {
	for _, id := range c.nodes {
		if n, ok := c.r.f.NodeByID(id); ok && n.System != nil && slices.Contains(types, n.System.Type) {
			if v, ok := n.System.Params[key]; ok {
				return v
			}
		}
	}
	return nil
}

// awaitRelease waits until the bus holds no message back (or the interaction ends).
func (c *ictx) awaitRelease() {
	c.awaitWhile(func() bool { return c.bus.Release() > 0 })
}

// awaitOwn waits until the message id is no longer held (or the interaction ends): a sender
// waits for its own message, never for the others the limit holds.
func (c *ictx) awaitOwn(id string) {
	c.awaitWhile(func() bool { c.bus.Release(); return c.bus.Held(id) })
}

// awaitWhile waits for the bus's next release for as long as held says a message is still
// held; false once the interaction has ended.
func (c *ictx) awaitWhile(held func() bool) bool {
	for held() {
		wait := max(c.bus.NextRelease().Sub(c.r.now()), time.Millisecond)
		t := time.NewTimer(wait)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
	return c.ctx.Err() == nil
}

// busEvent logs what happened to a message on the bus: message_held (with releaseAt),
// message_released, message_expired (the recipient that did not get it, and the ttl),
// message_dropped (with the reason).
func (c *ictx) busEvent(ev bus.Event) {
	e := ev.Envelope
	fields := map[string]any{"id": e.ID, "from": e.From, "to": []string(e.To), "type": e.Type}
	edge := ""
	if len(e.To) == 1 {
		edge = c.edgeBetween(e.From, e.To[0])
	}
	switch ev.Kind {
	case bus.Held:
		fields["releaseAt"] = ev.ReleaseAt.UTC().Format(time.RFC3339Nano)
	case bus.Expired:
		fields["to"] = ev.Recipient
		if e.Options != nil {
			fields["ttlS"] = e.Options.TTL
		}
		fields["ageMs"] = c.r.now().Sub(e.Timestamp).Milliseconds()
		defer c.r.emit(c.in.ID, edge, "warning", map[string]any{"agent": ev.Recipient, "message": fmt.Sprintf("a %s from %s expired before %s read it: its ttl is %ds and it was %s old",
			e.Type, e.From, ev.Recipient, fields["ttlS"], c.r.now().Sub(e.Timestamp).Round(time.Millisecond))})
	case bus.Dropped:
		fields["reason"] = ev.Reason
	}
	c.r.emit(c.in.ID, edge, "message_"+ev.Kind, fields)
}
