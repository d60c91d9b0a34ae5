package engine

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
)

// P12 — publish/subscribe: subscribers start on params.topics; the publisher prints
// PUBLISH <topic>: <text>; the broker delivers each event to each subscriber of the topic as
// one prompt (rate-limited, TTL-checked); SUBSCRIBE/UNSUBSCRIBE lines change subscriptions;
// REPLY: <text> lines go back to the publisher, which runs again with them.
func publishSubscribe(c *ictx) (string, error) {
	broker, pub, subs := c.cast.one("broker"), c.cast.one("publisher"), c.cast.all("subscriber")
	topics := stringList(c.params["topics"])
	if t := str(c.params["topic"]); t != "" {
		topics = append(topics, t)
	}
	subscribed := map[string]map[string]bool{}
	for _, s := range subs {
		subscribed[s] = map[string]bool{}
		for _, t := range topics {
			subscribed[s][t] = true
			c.bus.Subscribe(s, t)
		}
	}
	ttl := intParam(c.params, "ttl_s", 0)
	replies := []string{}
	delivered := 0
	for {
		// The first round needs an event (else nothing is published at all); later ones
		// may have nothing more to say (quiescent).
		var needs []need
		if c.st.Round == 0 {
			needs = append(needs, needKeyed("PUBLISH", "PUBLISH <topic>: <text>"))
		}
		up, err := c.ask("", pub, c.prompt(pub, message{Intent: "Publish events for your subscribers: " + c.task(), Inputs: append([]string{"Topics: " + strings.Join(topics, ", ")}, replies...), Plan: []string{"One event a line"}, Actions: []string{"PUBLISH <topic>: <text>, one line per event"}}), needs...)
		if err != nil {
			return "", err
		}
		replies = replies[:0]
		for _, p := range keyedLines(up.Text, "PUBLISH") {
			c.send(pub, broker, "publish", map[string]any{"topic": p.Key}, "")
			e := &bus.Envelope{From: broker, To: bus.Recipients{"topic:" + p.Key}, Type: "notification", Payload: map[string]any{"eventType": p.Key, "text": truncate(p.Value, 2000)}, Context: bus.Context{InteractionID: c.in.ID}}
			if ttl > 0 {
				e.Options = &bus.Options{TTL: ttl}
			}
			to, err := c.bus.Send(e)
			if err != nil {
				c.note("message_refused", map[string]any{"from": broker, "type": "notification", "topic": p.Key, "error": err.Error()})
				continue
			}
			c.note("message", map[string]any{"id": e.ID, "from": broker, "to": to, "type": "notification", "topic": p.Key, "publisher": pub})
		}
		// The broker delivers every event, the rate limit deciding when: one prompt per event.
		c.awaitRelease()
		for _, s := range subs {
			msgs, rejected := c.bus.Receive(s)
			for _, r := range rejected {
				c.note("message_refused", map[string]any{"to": s, "error": r.Error()})
			}
			for _, m := range msgs {
				p, _ := m.Payload.(map[string]any)
				topic, text := str(p["eventType"]), str(p["text"])
				if !subscribed[s][topic] {
					continue // unsubscribed since it was sent
				}
				delivered++
				rep, err := c.ask("", s, c.prompt(s, message{Intent: "An event on " + topic + " arrived; act on it", Inputs: []string{quote("Event", text)}, Plan: []string{"Act on it"}, Actions: []string{"Optional lines: SUBSCRIBE <topic>, UNSUBSCRIBE <topic>, REPLY: <text for the publisher>"}}))
				if err != nil {
					return "", err
				}
				for _, t := range words(rep.Text, "SUBSCRIBE") {
					subscribed[s][t] = true
					c.bus.Subscribe(s, t)
					c.note("subscribed", map[string]any{"agent": s, "topic": t})
				}
				for _, t := range words(rep.Text, "UNSUBSCRIBE") {
					delete(subscribed[s], t)
					c.bus.Unsubscribe(s, t)
					c.note("unsubscribed", map[string]any{"agent": s, "topic": t})
				}
				if r := fieldOr(rep.Text, "REPLY"); r != "" {
					replies = append(replies, quote("Reply of "+s, r))
					c.send(s, broker, "reply", map[string]any{"bytes": len(r), "for": pub}, "")
				}
			}
		}
		any := false
		for _, s := range subs {
			any = any || len(subscribed[s]) > 0
		}
		held := c.bus.Pending()
		switch {
		case !any && held == 0:
			c.st.Done = "all_unsubscribed"
		case len(replies) == 0:
			c.st.Done = "quiescent" // nothing for the publisher to react to
		}
		if c.endRound() || c.st.Done != "" {
			return fmt.Sprintf("%d event(s) delivered, %d held by the rate limit", delivered, held), nil
		}
	}
}
