package engine

import (
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
)

// engineTypes are the envelope types of the engine's own conversation (a prompt, its reply, a
// notice), allowed between any two nodes joined by an edge.
var engineTypes = []string{"prompt", "reply", "information", "notification", "error"}

// acl is the interaction's access control (agent-message-envelope.md): who may send which
// types to whom, from the edges' `messages` lists. An edge lets both of its ends send its
// messages to each other; a spoke of a router or broker may send its edge's messages through
// the hub to anyone. An edge with no `messages` list restricts nothing between its ends.
func (c *ictx) acl() map[string][]bus.Rule {
	hub := c.hub()
	acl := map[string][]bus.Rule{}
	for _, e := range c.in.Edges {
		msgs := stringList(e.Data.Params["messages"])
		types := append(slices.Clone(engineTypes), msgs...)
		if len(msgs) == 0 {
			types = []string{"*"}
		}
		acl[e.Source] = append(acl[e.Source], bus.Rule{Types: types, To: []string{e.Target}})
		acl[e.Target] = append(acl[e.Target], bus.Rule{Types: types, To: []string{e.Source}})
		if hub != "" && e.Target == hub && c.relays() {
			acl[e.Source] = append(acl[e.Source], bus.Rule{Types: types, To: []string{"*"}})
		}
	}
	return acl
}

// relays: the hub passes spokes' messages on to other spokes (router_targeted).
func (c *ictx) relays() bool { return c.roles[c.hub()] == "router" }
