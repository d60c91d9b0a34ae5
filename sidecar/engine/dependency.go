package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// maxInvalidValues is how many refused values a dependency request takes before it counts as
// rejected: a person who cannot give a valid value is not asked forever, and an answers file
// is never asked twice (its value would be the same).
const maxInvalidValues = 3

// askDependency asks for a [DEPENDENCY_REQUEST]'s value until one passes the type's validation
// (dependency-request-handling.md: an invalid value is reported, never delivered), the person
// rejects it, or its deadline passes. Every way of answering — the terminal, the editor, an
// answers file — offers its value to one check (req.offer): a refused value is logged as
// dependency_invalid (the reason, never the value) and the request asked again with
// req.Invalid saying why; the maxInvalidValues-th refusal rejects it. The editor's Inbox
// offers the value in its caller's goroutine, so whoever gave it hears the verdict at once.
// At the deadline the runtime's own timer resolves the agent (a required dependency fails it;
// an optional one goes on with its default); the outcome is then "timeout".
func (c *ictx) askDependency(p *runtime.Process, human Human, req *Request, asked func()) (Response, string, error) {
	ctx := c.ctx
	if !req.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(c.ctx, req.Deadline)
		defer cancel()
	}
	req.offer = c.dependencyCheck(req)
	for {
		resp, err := human.Ask(ctx, *req, asked)
		asked()
		switch {
		case ctx.Err() != nil && c.ctx.Err() == nil:
			return resp, "timeout", nil
		case err != nil:
			p.Stop(err.Error())
			return resp, "failed: " + err.Error(), err
		case !resp.Reject && !resp.offered:
			refused, rejected := req.offer(resp.Value)
			if rejected {
				resp = Response{Reject: true, Reason: refused.Error()}
			} else if refused != nil {
				continue // asked again, req.Invalid saying why
			}
		}
		if resp.Reject {
			if err := p.RejectDependency(req.ID, resp.Reason); err != nil {
				return resp, "error: " + err.Error(), nil
			}
			return resp, "rejected", nil
		}
		if req.Field("type") == "package" {
			resp.Value = packageValue(*req, resp.Value)
		}
		if err := p.ProvideDependency(req.ID, resp.Value); err != nil {
			return resp, "error: " + err.Error(), nil
		}
		switch t := req.Field("type"); {
		case runtime.SecretDependencyType(t):
			c.r.secrets.add(firstNonEmpty(req.Field("name"), req.ID), resp.Value)
		case t == "package":
			c.addToManifest(req.AgentID, *req, resp.Value) // manifest.go
		}
		return resp, "provided", nil
	}
}

// dependencyCheck is the one check of the values offered for req: the type's validation, a
// dependency_invalid event for each refusal, and the count that rejects the request at
// maxInvalidValues. Safe to call from the goroutine of whoever offers the value.
func (c *ictx) dependencyCheck(req *Request) func(string) (error, bool) {
	var mu sync.Mutex
	refusals := 0
	name := firstNonEmpty(req.Field("name"), req.ID)
	return func(value string) (error, bool) {
		if req.Field("type") == "package" {
			value = packageValue(*req, value) // "yes" approves the package the request names
		}
		invalid := agentproto.ValidateDependencyValue(req.Field("type"), value)
		if invalid == nil {
			return nil, false
		}
		mu.Lock()
		refusals++
		n := refusals
		req.Invalid = invalid.Error()
		mu.Unlock()
		c.r.emit(c.in.ID, "", "dependency_invalid", map[string]any{"agent": req.AgentID, "id": req.ID, "name": req.Field("name"), "error": invalid.Error(), "attempt": n})
		if n >= maxInvalidValues {
			return fmt.Errorf("the value for %s was refused: %w; after %d refused values the request is rejected", name, invalid, n), true
		}
		return fmt.Errorf("the value for %s was refused: %w; the request is still pending (%d of %d values refused)", name, invalid, n, maxInvalidValues), false
	}
}

// dependencyOutcome completes a dependency_resolved event: the outcome, the reason of a
// rejection, and for an optional dependency rejected or timed out what the agent went on
// with (its default, or an empty value). A required one rejected or timed out fails the agent.
func (c *ictx) dependencyOutcome(fields map[string]any, req Request, resp Response, outcome string) {
	fields["outcome"] = outcome
	if outcome == "rejected" && resp.Reason != "" {
		fields["reason"] = resp.Reason
	}
	if outcome != "rejected" && outcome != "timeout" {
		return
	}
	pend := runtime.Pending{Fields: req.Fields}
	switch {
	case pend.Required():
		fields["then"] = "the agent fails (the dependency is required)"
	case req.Field("default") != "":
		fields["then"] = "the agent goes on with the request's default"
	default:
		fields["then"] = "the agent goes on with an empty value (the request has no default)"
	}
}

// dependencyTimeout is the run's: the command line's, else the flow's, else the runtime's
// default (one hour).
func (r *run) dependencyTimeout() time.Duration {
	if r.o.DependencyTimeout > 0 {
		return r.o.DependencyTimeout
	}
	return time.Duration(r.f.Policy.DependencyTimeoutMs) * time.Millisecond
}
