// P13 broker_facilitator and P14 router_targeted.

package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
)

// P13 — broker: providers' capabilities are their skills and role (registered at the start);
// the requester prints REQUEST <capability>: <text>; the broker forwards it to the matching
// provider with the fewest forwards so far and relays the answer back.
func brokerFacilitator(c *ictx) (string, error) {
	broker, requester, providers := c.cast.one("broker"), c.cast.one("requester"), c.cast.all("provider")
	caps := map[string][]string{}
	for _, p := range providers {
		caps[p] = append(caps[p], c.roles[p])
		if n, ok := c.r.f.NodeByID(p); ok && n.Agent != nil {
			caps[p] = append(caps[p], n.Agent.Skills...)
		}
		c.note("register", map[string]any{"provider": p, "capabilities": caps[p]})
	}
	forwards := map[string]int{}
	var answers []string
	for {
		// The first request is needed (a broker that relays nothing did no work); later, no
		// REQUEST line means the requester needs nothing more.
		var needs []need
		if c.st.Round == 0 {
			needs = append(needs, needKeyed("REQUEST", "REQUEST <capability>: <request>"))
		}
		q, err := c.ask("", requester, c.prompt(requester, message{Intent: "Ask the broker for what you need: " + c.task(), Inputs: answers, Plan: []string{"Name a capability and the request"}, Actions: []string{"REQUEST <capability>: <request>; no REQUEST line when you need nothing more"}}), needs...)
		if err != nil {
			return "", err
		}
		reqs := keyedLines(q.Text, "REQUEST")
		if len(reqs) == 0 {
			c.st.Done = "completed"
			return firstNonEmpty(strings.Join(answers, "\n"), "no request"), nil
		}
		rq := reqs[len(reqs)-1]
		c.send(requester, broker, "request", map[string]any{"capability": rq.Key}, "")
		prov := ""
		for _, p := range providers {
			match := false
			for _, cp := range caps[p] {
				if strings.Contains(strings.ToLower(cp), strings.ToLower(rq.Key)) {
					match = true
				}
			}
			if match && (prov == "" || forwards[p] < forwards[prov]) {
				prov = p
			}
		}
		if prov == "" {
			c.send(broker, requester, "response", map[string]any{"failure": "no provider"}, "")
			answers = append(answers, "failure: no provider for "+rq.Key)
		} else {
			forwards[prov]++
			c.send(broker, prov, "forward", map[string]any{"capability": rq.Key}, "")
			ans, err := c.ask("", prov, c.prompt(prov, message{Intent: "Answer a request forwarded by the broker", Inputs: []string{quote("Request", rq.Value)}, Plan: []string{"Answer"}, Actions: []string{"Your answer"}}), needText)
			if err != nil {
				return "", err
			}
			c.send(prov, broker, "response", map[string]any{}, "")
			c.send(broker, requester, "response", map[string]any{"provider": prov}, "")
			answers = append(answers, quote("Answer of "+prov+" to "+rq.Key, ans.Text))
		}
		if c.endRound() {
			return strings.Join(answers, "\n"), nil
		}
	}
}

// routeFormat is P14's line.
const routeFormat = `{"to": ["<tag>", …], "text": "…"}`

// P14 — router: peers end their replies with JSON lines {"to": [tags], "text": …} (an optional
// "type", targeted_message by default, must be one the edge allows, or it is refused; an
// optional "priority" orders what each peer reads, most urgent first); the router
// delivers each to every other peer carrying a tag (its id, its role, params.tags), under the
// rate limit; the next round's prompts carry what was delivered and the acks.
func routerTargeted(c *ictx) (string, error) {
	router, peers := c.cast.one("router"), c.cast.all("peer")
	tags := map[string][]string{}
	extra, _ := c.params["tags"].(map[string]any)
	for _, p := range peers {
		tags[p] = append([]string{p, c.roles[p]}, stringList(extra[p])...)
	}
	inbox := map[string][]string{}
	acks := map[string][]string{}
	delivered := 0
	for {
		var mu sync.Mutex
		var needs []need // the first round needs messages (else nothing is routed at all)
		if c.st.Round == 0 {
			needs = append(needs, need{line: routeFormat, has: func(t string) bool {
				return slices.ContainsFunc(jsonLines(t), func(m map[string]any) bool { return len(routeTo(m)) > 0 })
			}})
		}
		reps, err := c.askAll("", peers, func(p string) string {
			mu.Lock()
			defer mu.Unlock()
			var others []string
			for _, o := range peers {
				if o != p {
					others = append(others, o+" (tags "+strings.Join(tags[o], ", ")+")")
				}
			}
			in := append([]string{"Peers: " + strings.Join(others, "; ")}, inbox[p]...)
			in = append(in, acks[p]...)
			inbox[p], acks[p] = nil, nil
			return c.prompt(p, message{Intent: "Work on the task and send what others need: " + c.task(), Inputs: in, Plan: []string{"Pick targets by tag"}, Actions: []string{"End with one JSON line per message: " + routeFormat}})
		}, needs...)
		if err = hard(err); err != nil {
			return "", err
		}
		sent := 0
		sentBy := map[string]string{} // message id → its sender
		var sentOrder []string
		var silent []string
		for _, r := range reps {
			if len(r.Missing) > 0 {
				c.lacking(r, "it sends nothing this round")
				silent = append(silent, r.Node)
			}
			for _, m := range jsonLines(r.Text) {
				want := routeTo(m)
				text := str(m["text"])
				typ := firstNonEmpty(str(m["type"]), "targeted_message")
				if len(want) == 0 {
					continue
				}
				sent++
				var to []string
				for _, o := range peers {
					if o == r.Node {
						continue
					}
					for _, w := range want {
						if containsFold(tags[o], w) && !containsFold(to, o) {
							to = append(to, o)
						}
					}
				}
				if len(to) == 0 {
					acks[r.Node] = append(acks[r.Node], "ack: undeliverable (no peer carries "+strings.Join(want, ", ")+")")
					c.note("undeliverable", map[string]any{"from": r.Node, "to": want})
					continue
				}
				prio := strings.ToLower(str(m["priority"]))
				if !slices.Contains(bus.Priorities, prio) {
					prio = c.priority()
				}
				e := &bus.Envelope{From: r.Node, To: bus.Recipients(to), Type: typ, Priority: prio, Payload: map[string]any{"text": truncate(text, 2000)}, Context: bus.Context{InteractionID: c.in.ID}}
				if _, err := c.bus.Send(e); err != nil {
					c.note("message_refused", map[string]any{"from": r.Node, "to": to, "type": typ, "error": err.Error()})
					acks[r.Node] = append(acks[r.Node], "ack: refused ("+err.Error()+")")
					continue
				}
				c.note("message", map[string]any{"id": e.ID, "from": r.Node, "to": to, "type": typ, "via": router, "priority": e.Priority})
				sentBy[e.ID] = r.Node
				sentOrder = append(sentOrder, e.ID)
			}
		}
		// Held messages are delivered before the next round, late but never lost; a sender
		// is told delivered only for what its targets got.
		c.awaitRelease()
		got := map[string][]string{} // message id → the peers that got it
		for _, p := range peers {
			msgs, _ := c.bus.Receive(p)
			for _, m := range msgs {
				pl, _ := m.Payload.(map[string]any)
				inbox[p] = append(inbox[p], quote("Message from "+m.From, str(pl["text"])))
				got[m.ID] = append(got[m.ID], p)
				c.heard(p, m.From)
				delivered++
			}
		}
		if truthy(c.params["ack_required"]) {
			for _, id := range sentOrder {
				if to := got[id]; len(to) > 0 {
					acks[sentBy[id]] = append(acks[sentBy[id]], "ack: delivered to "+strings.Join(to, ", "))
				} else {
					acks[sentBy[id]] = append(acks[sentBy[id]], "ack: not delivered (held by the rate limit when the interaction ended, or expired)")
				}
			}
		}
		if sent == 0 && c.st.Round == 0 {
			return "", &NoWorkError{Msg: "no peer sent anything: " + strings.Join(silent, ", ") + " wrote no `" + routeFormat + "` line, even when asked again"}
		}
		if sent == 0 {
			c.st.Done = "quiescent"
			c.note("quiescent", map[string]any{"message": "no peer sent anything this round"})
		}
		if c.endRound() || sent == 0 {
			return fmt.Sprintf("%d message(s) delivered, %d held by the rate limit", delivered, c.bus.Release()), nil
		}
	}
}
