package engine

// Who a step is from. The log names, for every agent step, the node whose message the agent
// acts on and the edge it came along ({"event": "step", "from": "debater_a", "to": "judge",
// "edgeId": "e1"}), also when an executor asks the agent without a message of its own.

// sender is who node's turn is from, and along which drawn edge: the asker when the executor
// names one; else whoever last sent node a message in this interaction (a judge's step is
// from the party whose answer reached it last); else the other end of the first drawn edge
// into node, or out of it (its reply goes back along that edge); else the engine.
func (c *ictx) sender(from, node string) (who, edge string) {
	if from != "" {
		return from, c.edgeBetween(from, node)
	}
	c.mu.Lock()
	last, ok := c.lastTo[node]
	c.mu.Unlock()
	if ok {
		return last[0], last[1]
	}
	for _, e := range c.in.Edges {
		if e.Target == node && e.Source != node {
			return e.Source, e.ID
		}
	}
	for _, e := range c.in.Edges {
		if e.Source == node && e.Target != node {
			return e.Target, e.ID
		}
	}
	return "engine", ""
}

// edgeBetween is the drawn edge from a to b, else from b to a (a reply goes back along the
// edge its request came by); "" when none is drawn.
func (c *ictx) edgeBetween(a, b string) string {
	if id, ok := c.edgeOf[[2]string{a, b}]; ok {
		return id
	}
	return c.edgeOf[[2]string{b, a}]
}

// heard records that node got a message from sender: its next step is from sender.
func (c *ictx) heard(node, sender string) {
	if sender == "" || sender == node {
		return
	}
	edge := c.edgeBetween(sender, node)
	c.mu.Lock()
	c.lastTo[node] = [2]string{sender, edge}
	c.mu.Unlock()
}
