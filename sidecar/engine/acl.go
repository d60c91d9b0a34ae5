package engine

import (
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// engineTypes are the envelope types of the engine's own conversation (a prompt, its reply, a
// notice), allowed both ways between any two nodes joined by an edge or a route.
var engineTypes = []string{"prompt", "reply", "information", "notification", "error"}

// acl is the interaction's access control (agent-message-envelope.md): who may send which
// types to whom. It is the union of
//
//   - the pattern's own routes (patterns/*.json "routes") between the roles present, as the
//     cast finds them: a route lets each node playing its From send its messages to each
//     node playing its To, whatever edges were drawn (a debater reads the other debaters'
//     answers though each is drawn only to the judge);
//   - the drawn edges: an edge lets both of its ends send its `messages` to each other; an
//     edge with no `messages` list carries the pattern's messages (patternMessages: a P14
//     peer's edge to the router carries targeted_message, delivery and ack, not a
//     task_assignment), and restricts nothing only for a pattern that names none; a spoke of a router may send its edge's messages through the hub to anyone.
//
// Both carry the engine's own conversation (engineTypes) both ways. Anything else is refused:
// a message outside the pattern.
func (c *ictx) acl() map[string][]bus.Rule {
	acl := map[string][]bus.Rule{}
	allow := func(from, to string, types []string) {
		if from != to {
			acl[from] = append(acl[from], bus.Rule{Types: types, To: []string{to}})
		}
	}
	for _, pair := range c.routePairs() {
		allow(pair.from, pair.to, append(slices.Clone(engineTypes), pair.messages...))
		allow(pair.to, pair.from, engineTypes)
	}
	hub := c.hub()
	for _, e := range c.in.Edges {
		msgs := stringList(e.Data.Params["messages"])
		if len(msgs) == 0 {
			msgs = c.patternMessages()
		}
		types := append(slices.Clone(engineTypes), msgs...)
		if len(msgs) == 0 {
			types = []string{"*"}
		}
		allow(e.Source, e.Target, types)
		allow(e.Target, e.Source, types)
		if hub != "" && e.Target == hub && c.relays() {
			acl[e.Source] = append(acl[e.Source], bus.Rule{Types: types, To: []string{"*"}})
		}
	}
	return acl
}

// patternMessages are every message type the pattern's template names, on its edges and its
// routes: what an edge drawn without a `messages` list carries. A drawn edge may join roles
// the template does not (P03's phases follow the drawn chain whatever the roles), so the list
// is the pattern's, not the template edge's between the same roles.
func (c *ictx) patternMessages() []string {
	var out []string
	add := func(ms []string) {
		for _, m := range ms {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	t := c.template()
	for _, te := range t.Edges {
		add(te.Messages)
	}
	for _, r := range t.Routes {
		add(r.Messages)
	}
	return out
}

// routePair is a pattern route between two nodes.
type routePair struct {
	from, to string
	messages []string
}

// routePairs expands the pattern's routes over the cast: every node playing a route's From to
// every other node playing its To.
func (c *ictx) routePairs() []routePair {
	var out []routePair
	for _, r := range c.template().Routes {
		for _, from := range c.cast[r.From] {
			for _, to := range c.cast[r.To] {
				if from != to {
					out = append(out, routePair{from, to, r.Messages})
				}
			}
		}
	}
	return out
}

// links are the node pairs the bus's topology rules must let through: the drawn edges and the
// pattern's routes (a route is the pattern's, whatever the topology's hub or stage order says:
// P17's judge sends revise back to the producer at the head of its pipeline).
func (c *ictx) links() [][2]string {
	out := make([][2]string, 0, len(c.in.Edges))
	for _, e := range c.in.Edges {
		out = append(out, [2]string{e.Source, e.Target})
	}
	for _, p := range c.routePairs() {
		out = append(out, [2]string{p.from, p.to})
	}
	return out
}

// relays: the hub passes spokes' messages on to other spokes (router_targeted).
func (c *ictx) relays() bool { return c.roles[c.hub()] == "router" }

// template is the interaction's pattern template (its roles and routes).
func (c *ictx) template() pattern.Template {
	p, _ := pattern.Lookup(c.pat)
	return p.Template
}
