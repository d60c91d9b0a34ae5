package engine

import "fmt"

// protocolPerson is P20's protocol when the outside caller is a person (SkillInvocation).
const protocolPerson = "person"

// P20 — inside a run, the bridge makes one MCP-style tools/call to the local agent with the
// run's task and returns its reply (`agentcanvas mcp FLOW` serves whole flows to outside
// clients).
func protocolBridge(c *ictx) (string, error) {
	bridge, local := c.cast.one("bridge"), c.cast.all("local_agent")
	if len(local) == 0 {
		return "", fmt.Errorf("the bridge has no local agent")
	}
	protocol := firstNonEmpty(str(c.params["protocol"]), "mcp")
	call := fmt.Sprintf(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":%q,"arguments":{"prompt":%q}}}`, local[0], truncate(c.task(), 2000))
	m := message{Intent: "Answer an outside client's tool call", Inputs: []string{quote("Call", call)}, Plan: []string{"Do the task"}, Actions: []string{"Your answer (the tool result text)"}}
	if protocol == protocolPerson {
		// A person at the editor or the terminal (a skill invocation): their words as they are.
		call = c.task()
		m = message{Intent: "Do what the person who invoked you asks, following your instructions", Inputs: []string{quote("Request", call)}, Plan: []string{"Follow your instructions", "Do the task"}, Actions: []string{"What you did, and your answer"}}
	}
	c.note("bridged", map[string]any{"protocol": protocol, "bridge": bridge})
	c.send(bridge, local[0], "request", map[string]any{"bytes": len(call)}, "")
	rep, err := c.ask("", local[0], c.prompt(local[0], m), needText)
	if err != nil {
		return "", err
	}
	c.send(local[0], bridge, "response", map[string]any{"bytes": len(rep.Text)}, "")
	c.st.Done = "bridged"
	c.endRound()
	return rep.Text, nil
}
