package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
)

// P12 — publish/subscribe: subscribers start on params.topics; the publisher prints
// PUBLISH <topic>: <text> (PUBLISH <topic> <priority>: <text> for an urgent one); the broker
// sends each event to the topic's subscribers, rate-limited, with params.ttl_s as its ttl;
// each subscriber reads its events one at a time, as the limit lets them through, so an
// event's age is checked when its subscriber gets to it. SUBSCRIBE/UNSUBSCRIBE lines change
// subscriptions; REPLY: <text> lines go back to the publisher, which runs again with them.
func publishSubscribe(c *ictx) (string, error) {
	ps := &pubsub{c: c, broker: c.cast.one("broker"), pub: c.cast.one("publisher"), subs: c.cast.all("subscriber"), subscribed: map[string]map[string]bool{}}
	ps.topics = stringList(c.params["topics"])
	if t := str(c.params["topic"]); t != "" {
		ps.topics = append(ps.topics, t)
	}
	for _, s := range ps.subs {
		ps.subscribed[s] = map[string]bool{}
		for _, t := range ps.topics {
			ps.subscribed[s][t] = true
			c.bus.Subscribe(s, t)
		}
	}
	for {
		if err := ps.publish(); err != nil {
			return "", err
		}
		if err := ps.deliver(); err != nil {
			return "", err
		}
		held := c.bus.Pending()
		switch {
		case !ps.anySubscribed() && held == 0:
			c.st.Done = "all_unsubscribed"
		case len(ps.replies) == 0:
			c.st.Done = "quiescent" // nothing for the publisher to react to
		}
		if c.endRound() || c.st.Done != "" {
			if ps.delivered == 0 && ps.expired() > 0 && c.ctx.Err() == nil {
				return "", &ExpiredError{Msg: fmt.Sprintf("every event expired before its subscriber read it (%d expired, none delivered; params.ttl_s is %d)", ps.expired(), ps.ttl())}
			}
			return fmt.Sprintf("%d event(s) delivered, %d expired, %d held by the rate limit", ps.delivered, ps.expired(), held), nil
		}
	}
}

// pubsub is one publish/subscribe interaction's state.
type pubsub struct {
	c            *ictx
	broker, pub  string
	subs, topics []string
	mu           sync.Mutex // the fields below: subscribers run in parallel
	subscribed   map[string]map[string]bool
	replies      []string
	delivered    int
}

func (ps *pubsub) ttl() int { return intParam(ps.c.params, "ttl_s", 0) }

func (ps *pubsub) expired() int { return ps.c.bus.Metrics().Expired }

func (ps *pubsub) anySubscribed() bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, s := range ps.subs {
		if len(ps.subscribed[s]) > 0 {
			return true
		}
	}
	return false
}

// publish runs the publisher with the replies so far and sends each event it publishes to
// the topic's subscribers (held by the rate limit as it must be; nothing waits for it here).
func (ps *pubsub) publish() error {
	c := ps.c
	// The first round needs an event (else nothing is published at all); later ones may have
	// nothing more to say (quiescent).
	var needs []need
	if c.st.Round == 0 {
		needs = append(needs, needKeyed("PUBLISH", "PUBLISH <topic>: <text>"))
	}
	ps.mu.Lock()
	replies := slices.Clone(ps.replies)
	ps.replies = ps.replies[:0]
	ps.mu.Unlock()
	up, err := c.ask("", ps.pub, c.prompt(ps.pub, message{Intent: "Publish events for your subscribers: " + c.task(), Inputs: append([]string{"Topics: " + strings.Join(ps.topics, ", ")}, replies...), Plan: []string{"One event a line"}, Actions: []string{"PUBLISH <topic>: <text>, one line per event (PUBLISH <topic> critical|high|low: <text> to mark its priority)"}}), needs...)
	if err != nil {
		return err
	}
	for _, p := range keyedLines(up.Text, "PUBLISH") {
		topic, priority := topicAndPriority(p.Key)
		c.send(ps.pub, ps.broker, "publish", map[string]any{"topic": topic}, "")
		e := &bus.Envelope{From: ps.broker, To: bus.Recipients{"topic:" + topic}, Type: "notification", Priority: firstNonEmpty(priority, c.priority()),
			Payload: map[string]any{"eventType": topic, "text": truncate(p.Value, 2000)}, Context: bus.Context{InteractionID: c.in.ID}}
		if ttl := ps.ttl(); ttl > 0 {
			e.Options = &bus.Options{TTL: ttl}
		}
		to, err := c.bus.Send(e)
		if err != nil {
			c.note("message_refused", map[string]any{"from": ps.broker, "type": "notification", "topic": topic, "error": err.Error()})
			continue
		}
		c.note("message", map[string]any{"id": e.ID, "from": ps.broker, "to": to, "type": "notification", "topic": topic, "publisher": ps.pub, "priority": e.Priority})
	}
	return nil
}

// topicAndPriority reads PUBLISH's key: "<topic>" or "<topic> <priority>".
func topicAndPriority(key string) (topic, priority string) {
	f := strings.Fields(key)
	if len(f) == 2 && slices.Contains(bus.Priorities, strings.ToLower(f[1])) {
		return f[0], strings.ToLower(f[1])
	}
	return key, ""
}

// deliver lets every subscriber read its events, each subscriber on its own (in parallel),
// one event at a time as the rate limit lets it through, until none is left for it.
func (ps *pubsub) deliver() error {
	errs := make([]error, len(ps.subs))
	var wg sync.WaitGroup
	for i, s := range ps.subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ps.read(s)
		}()
	}
	wg.Wait()
	return firstError(errs)
}

// read is one subscriber reading its events until none is deliverable or held for it.
func (ps *pubsub) read(s string) error {
	c := ps.c
	for {
		m, rejected, ok := c.bus.ReceiveNext(s)
		for _, r := range rejected {
			c.note("message_refused", map[string]any{"to": s, "error": r.Error()})
		}
		if !ok {
			// Nothing to read now: wait for the limit to let the next one through, if any is
			// held for this subscriber.
			if c.bus.HeldFor(s) == 0 || !c.awaitWhile(func() bool { c.bus.Release(); return c.bus.HeldFor(s) > 0 && c.bus.Mailbox(s) == 0 }) {
				return nil
			}
			continue
		}
		p, _ := m.Payload.(map[string]any)
		topic, text := str(p["eventType"]), str(p["text"])
		ps.mu.Lock()
		wanted := ps.subscribed[s][topic]
		if wanted {
			ps.delivered++
		}
		ps.mu.Unlock()
		if !wanted {
			continue // unsubscribed since it was sent
		}
		c.heard(s, m.From)
		if err := ps.act(s, topic, text, m.Priority); err != nil {
			return err
		}
	}
}

// act is one subscriber's step on one event.
func (ps *pubsub) act(s, topic, text, priority string) error {
	c := ps.c
	in := []string{quote("Event", text)}
	if priority != "" && priority != "medium" {
		in = append(in, "Priority: "+priority)
	}
	rep, err := c.ask("", s, c.prompt(s, message{Intent: "An event on " + topic + " arrived; act on it", Inputs: in, Plan: []string{"Act on it"}, Actions: []string{"Optional lines: SUBSCRIBE <topic>, UNSUBSCRIBE <topic>, REPLY: <text for the publisher>"}}))
	if err != nil {
		return err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, t := range words(rep.Text, "SUBSCRIBE") {
		ps.subscribed[s][t] = true
		c.bus.Subscribe(s, t)
		c.note("subscribed", map[string]any{"agent": s, "topic": t})
	}
	for _, t := range words(rep.Text, "UNSUBSCRIBE") {
		delete(ps.subscribed[s], t)
		c.bus.Unsubscribe(s, t)
		c.note("unsubscribed", map[string]any{"agent": s, "topic": t})
	}
	if r := fieldOr(rep.Text, "REPLY"); r != "" {
		ps.replies = append(ps.replies, quote("Reply of "+s, r))
		c.send(s, ps.broker, "reply", map[string]any{"bytes": len(r), "for": ps.pub}, "")
	}
	return nil
}

// firstError is the first non-nil error of errs.
func firstError(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
