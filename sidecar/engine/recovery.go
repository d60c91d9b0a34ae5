package engine

import (
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// An agent's [ERROR] with recovery notify_user pauses it and asks the person, at the terminal,
// in the editor (Needs You) or from --answers: retry, skip or stop (runtime/recoverable.go
// carries the choice out). A run that cannot ask anyone (--non-interactive, no Human) stops
// the agent with the error.

// recoveryChoice reads a person's answer to an error: retry, skip or stop (by word or by its
// number in runtime.RecoveryChoices); ok is false for anything else.
func recoveryChoice(answer string) (choice string, ok bool) {
	a := strings.ToLower(strings.TrimSpace(answer))
	for i, c := range runtime.RecoveryChoices {
		if a == c || a == string(rune('1'+i)) {
			return c, true
		}
	}
	return "", false
}

// errorQuestion is how an error is put to the person.
func errorQuestion(r Request) string {
	q := r.AgentID + " reported an error: " + firstNonEmpty(r.Field("message"), "(no message)")
	if d := r.Field("details"); d != "" {
		q += " (" + d + ")"
	}
	return q + ". Retry, skip it, or stop the agent?"
}

// askRecovery asks the person what to do about an [ERROR] (notify_user) and tells the agent.
// The outcome is the choice made.
func (c *ictx) askRecovery(p *runtime.Process, human Human, req *Request, asked func()) (string, error) {
	resp, err := human.Ask(c.ctx, *req, asked)
	asked()
	if c.ctx.Err() != nil {
		return "stopped", c.ctx.Err()
	}
	choice, ok := recoveryChoice(resp.Value)
	reason := resp.Reason
	switch {
	case err != nil:
		choice, reason = runtime.RecoveryStop, "no one could choose ("+err.Error()+")"
	case !ok:
		choice, reason = runtime.RecoveryStop, "the answer "+quoteValue(resp.Value)+" is not retry, skip or stop"
	}
	if choice == runtime.RecoveryStop && reason == "" {
		reason = "the person chose to stop"
	}
	if err := p.ResolveError(req.ID, choice, reason); err != nil {
		return "error: " + err.Error(), nil
	}
	return choice, nil
}

func quoteValue(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return "\"" + s + "\""
}
