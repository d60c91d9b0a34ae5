package engine

import (
	"errors"
	"fmt"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// Agents are confined by the kernel as Limits.Confine says (sidecar/confine; docs/agents.md,
// "Security"). The run decides once, at its start, what the kernel offers: under required a
// run whose agents cannot be confined never starts; under auto it starts after one warning.

// ErrConfinementUnavailable is returned (wrapped) when a run is refused because its agents
// must be confined and cannot be.
var ErrConfinementUnavailable = errors.New("agents cannot be confined")

// confineMode is the run's confinement mode now ("" in Limits is auto).
func (l Limits) confineMode() confine.Mode {
	if l.Confine == "" {
		return confine.ModeAuto
	}
	return l.Confine
}

// confineFrom names where the mode came from, for messages.
func (l Limits) confineFrom() string {
	if l.ConfineFrom == "" {
		return "confinement"
	}
	return l.ConfineFrom
}

// checkConfinement refuses a run that must confine agent processes on a kernel that cannot.
// It returns what the kernel offers, for run_started.
func checkConfinement(f *flow.Flow, o Options) (confine.Status, error) {
	st := confine.Probe()
	l := o.limits()
	if l.confineMode() == confine.ModeRequired && !st.Available() && spawnsProcesses(f, o) {
		return st, fmt.Errorf("%w: %s is required, and %s; set it to auto to run them unconfined", ErrConfinementUnavailable, l.confineFrom(), st)
	}
	return st, nil
}

// confinementStatus says, at the run's start, how its agents are confined (run_started's
// confinement field), and warns when they cannot be.
func (r *run) confinementStatus() (status, warning string) {
	l := r.limits()
	st := r.confined
	switch {
	case l.confineMode() == confine.ModeOff:
		return "off (" + l.confineFrom() + ")", ""
	case !spawnsProcesses(r.f, r.o):
		return "not needed: no agent process", ""
	case !st.Available():
		return "unavailable: " + st.Reason, fmt.Sprintf("agents run unconfined, with all of your rights (%s); set %s to required to refuse such runs, or to off to silence this warning", st, l.confineFrom())
	}
	return st.String() + "; " + runtime.WorldStatus(), ""
}

// spawnsProcesses reports whether any node of the run may start an agent process (dry-run
// agents are answered in the engine).
func spawnsProcesses(f *flow.Flow, o Options) bool {
	if o.DryRun || o.Backend == runtime.BackendDryRun {
		return false
	}
	// A backend chosen for the run (the editor's pick, run --backend) replaces every node's.
	override := o.Backend != "" && o.Backend != "auto"
	uses := func(rt *flow.Runtime) bool { return override || rt == nil || rt.BackendID != runtime.BackendDryRun }
	for _, a := range f.Agents {
		if uses(a.Runtime) {
			return true
		}
	}
	for _, s := range f.SystemNodes {
		if s.Runtime != nil && uses(s.Runtime) {
			return true
		}
	}
	return false
}
