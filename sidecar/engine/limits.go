package engine

import (
	"fmt"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// AutoApply is how far the person lets the engine apply a worker's proposal without review.
// It can only restrict the flow's own policy.autoApply: the stricter of the two wins, so no
// value makes the engine apply a proposal the flow does not allow it to.
type AutoApply string

const (
	// AutoApplyFlow: as the flow says — applied when its policy.autoApply is true, its
	// quality gate passed and the proposal checks clean against the workspace. The command
	// line's default ("" means the same).
	AutoApplyFlow AutoApply = "flow"
	// AutoApplyWhenClean: as AutoApplyFlow, and only when the check gives no warning either
	// (above all: the workspace's HEAD is still the commit the sandbox was prepared from).
	AutoApplyWhenClean AutoApply = "whenClean"
	// AutoApplyOff: nothing is applied automatically, whatever the flow says. The editor's
	// default.
	AutoApplyOff AutoApply = "off"
)

// AutoApplyValues are the accepted values, strictest first.
var AutoApplyValues = []AutoApply{AutoApplyOff, AutoApplyWhenClean, AutoApplyFlow}

// ParseAutoApply reads a setting's or flag's value.
func ParseAutoApply(s string) (AutoApply, error) {
	for _, v := range AutoApplyValues {
		if s == string(v) {
			return v, nil
		}
	}
	return "", fmt.Errorf("%q is not one of %v", s, AutoApplyValues)
}

// Limits are the person's restrictions on what runs may touch and apply: the editor's
// settings or the command line's flags. The zero value restricts nothing beyond the built-in
// path rules and the flow's own policy.
type Limits struct {
	// Rules are the allowed and blocked folders: the flow's agents' files are validated
	// against them, sandboxes copy only what they allow, and proposals are checked with them.
	Rules safepath.Rules
	// AutoApply caps the flow's policy.autoApply.
	AutoApply AutoApply
	// AutoApplyFrom names the setting or flag AutoApply came from, said when it holds a
	// proposal back.
	AutoApplyFrom string
	// Confine is how agent processes are confined by the kernel ("" is confine.ModeAuto):
	// read when the run starts (required refuses it where agents cannot be confined) and at
	// each agent's start. ConfineFrom names the setting or flag, for messages.
	Confine     confine.Mode
	ConfineFrom string
	// Gateway and Pricing are the model gateway's mode and price overrides (gateway.go), read
	// when an agent is routed; Options.Gateway and Options.Pricing (the command line) win.
	Gateway string
	Pricing gateway.Pricing
}

// limits are the run's limits now: read at each use (validation at the start, each sandbox,
// each review and apply), so a change of the editor's settings reaches runs already going.
func (r *run) limits() Limits { return r.o.limits() }

func (o Options) limits() Limits {
	if o.Limits == nil {
		return Limits{}
	}
	return o.Limits()
}

// autoApplyHeld says why a reviewed proposal the flow would apply automatically is not, or ""
// when it is to be applied. res and err are the proposal's check.
func (l Limits) autoApplyHeld(gatePassed bool, res *proposal.Result, err error) string {
	name := l.AutoApplyFrom
	if name == "" {
		name = "auto-apply"
	}
	switch {
	case l.AutoApply == AutoApplyOff:
		return name + " is off"
	case err != nil || res == nil || len(res.Problems) > 0:
		return "the proposal does not apply cleanly"
	case !gatePassed:
		return "the quality gate did not pass"
	case l.AutoApply == AutoApplyWhenClean && len(res.Warnings) > 0:
		return fmt.Sprintf("%s is whenClean and the check warned: %s", name, res.Warnings[0])
	}
	return ""
}
