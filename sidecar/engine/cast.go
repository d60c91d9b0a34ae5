package engine

import (
	"slices"
	"strings"
)

// cast is who plays which of the pattern's roles (patterns/*.json role ids) in one
// interaction: role → nodes, in node order. The executors take their parties from it and the
// access rules (acl.go) expand the pattern's routes over it, so the bus allows exactly the
// exchanges the executor runs. Flows name roles in free text ("pro", "team lead"); each
// pattern recognises its roles by words, by system node type, or by position (the first node
// of the chain starts a pipeline, a negotiation, a request).
type cast map[string][]string

// one is the first node playing role, "" when none does.
func (k cast) one(role string) string {
	if ids := k[role]; len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// all are the nodes playing role (a copy: callers sort it).
func (k cast) all(role string) []string { return slices.Clone(k[role]) }

// set records the nodes playing role, leaving out "" (a role nobody plays).
func (k cast) set(role string, ids ...string) {
	for _, id := range ids {
		if id != "" && !slices.Contains(k[role], id) {
			k[role] = append(k[role], id)
		}
	}
}

// casts say, per pattern, how its parties are found. A pattern without an entry is cast by
// role name (castByName): its executor follows the drawn edges (P03, P04).
var casts = map[string]func(c *ictx, k cast){
	"manager_worker": func(c *ictx, k cast) {
		c.oneAndRest(k, "manager", c.chain()[0], []string{"manager", "orchestrator", "coordinator"}, "worker")
	},
	"role_play_pair": func(c *ictx, k cast) {
		c.oneAndRest(k, "user", c.chain()[0], []string{"user", "client", "instructor"}, "assistant")
	},
	"debate_judge": func(c *ictx, k cast) { c.oneAndRest(k, "judge", "", []string{"judge"}, "debater") },
	"critic_refiner_curator": func(c *ictx, k cast) {
		for _, role := range []string{"judge", "critic", "refiner", "curator"} {
			k.set(role, c.one("", role))
		}
	},
	"majority_vote": func(c *ictx, k cast) {
		tb, agg := c.one("", "tiebreak", "tie-break", "judge"), c.one("", "aggregator")
		k.set("tiebreak", tb)
		k.set("aggregator", agg)
		k.set("voter", c.others(tb, agg)...)
	},
	"self_consistency": func(c *ictx, k cast) { c.oneAndRest(k, "aggregator", "", []string{"aggregator"}, "sampler") },
	"contract_net": func(c *ictx, k cast) {
		c.oneAndRest(k, "manager", c.chain()[0], []string{"manager", "initiator", "orchestrator"}, "bidder")
	},
	"bilateral_negotiation": func(c *ictx, k cast) {
		c.oneAndRest(k, "proposer", c.chain()[0], []string{"proposer", "buyer"}, "responder")
	},
	"blackboard": func(c *ictx, k cast) { c.oneAndRest(k, "blackboard", "", []string{"blackboard"}, "knowledge_source") },
	"publish_subscribe": func(c *ictx, k cast) {
		broker := c.one("", "broker")
		pub := c.one(c.chain()[0], "publisher")
		k.set("broker", broker)
		k.set("publisher", pub)
		k.set("subscriber", c.others(pub, broker)...)
	},
	"broker_facilitator": func(c *ictx, k cast) {
		broker := c.one("", "broker", "facilitator")
		requester := c.one(c.chain()[0], "requester", "client")
		k.set("broker", broker)
		k.set("requester", requester)
		k.set("provider", c.others(broker, requester)...)
	},
	"router_targeted": func(c *ictx, k cast) { c.oneAndRest(k, "router", "", []string{"router"}, "peer") },
	// P15: the root is the node nobody points to; sub-managers are the other nodes with a
	// team of their own (drawn edges out); workers are the rest.
	"hierarchical_tree": func(c *ictx, k cast) {
		into := map[string]bool{}
		for _, e := range c.in.Edges {
			into[e.Target] = true
		}
		root := c.nodes[0]
		for _, id := range c.nodes {
			if !into[id] {
				root = id
				break
			}
		}
		k.set("root", root)
		for _, id := range c.others(root) {
			if len(c.children(id)) > 0 {
				k.set("sub_manager", id)
			} else {
				k.set("worker", id)
			}
		}
	},
	"red_team_judge": func(c *ictx, k cast) {
		k.set("judge", c.one("", "judge"))
		k.set("red_team", c.one("", "red", "attacker"))
		k.set("defender", c.one("", "defender", "blue"))
	},
	"fact_check_verifier": func(c *ictx, k cast) {
		k.set("producer", c.one(c.chain()[0], "producer", "writer"))
		k.set("verifier", c.one("", "verifier", "checker"))
		k.set("judge", c.one("", "judge"))
	},
	// P18: each step by its role word, else by its place in the chain.
	"plan_execute_reflect": func(c *ictx, k cast) {
		ids := c.chain()
		for i, role := range []string{"planner", "executor", "observer", "reflector"} {
			k.set(role, c.one(ids[min(i, len(ids)-1)], role))
		}
	},
	// P19: members are who reports to the curator; the memory is what the curator writes to.
	"memory_sync": func(c *ictx, k cast) {
		curator := c.one("", "curator")
		k.set("curator", curator)
		for _, e := range c.in.Edges {
			switch {
			case curator == "" || e.Source == e.Target:
			case e.Target == curator:
				k.set("member", e.Source)
			case e.Source == curator:
				k.set("memory", e.Target)
			}
		}
	},
	"protocol_bridge": func(c *ictx, k cast) { c.oneAndRest(k, "bridge", "", []string{"bridge"}, "local_agent") },
}

// oneAndRest casts the first node whose role has one of words (else fallback) as role, and
// every other node as rest: the shape of most patterns (a hub or a lead, and the others).
func (c *ictx) oneAndRest(k cast, role, fallback string, words []string, rest string) {
	one := c.one(fallback, words...)
	k.set(role, one)
	k.set(rest, c.others(one)...)
}

// castRoles finds the interaction's parties (see cast).
func (c *ictx) castRoles() cast {
	k := cast{}
	if len(c.nodes) == 0 {
		return k
	}
	if f := casts[c.pat]; f != nil {
		f(c, k)
		return k
	}
	c.castByName(k)
	return k
}

// castByName: a node plays every template role whose id its role names (P03's planner,
// designer, coder…; P04's pm, architect, engineer, qa).
func (c *ictx) castByName(k cast) {
	for _, r := range c.template().Roles {
		for _, id := range c.nodes {
			if strings.Contains(c.roles[id], r.Role) || (r.SystemType != "" && strings.HasPrefix(c.roles[id], r.SystemType)) {
				k.set(r.Role, id)
			}
		}
	}
}
