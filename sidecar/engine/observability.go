package engine

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// Observability as the flow configures it on its edges (observability: {logs, retain_days}):
// an interaction whose edges turn logs off writes none of its events to the JSONL log (the
// terminal and the editor still get them as they happen), and the flow's log folder keeps
// the days its interactions retain.

// logPolicy is what the run writes to the log.
type logPolicy struct {
	off map[string]bool // interaction id → its events are not logged
	// runLogged: the run's own events (run_started, run_finished…) are logged; not when every
	// interaction turns logs off, since then the flow asked for no log at all.
	runLogged bool
	// retainDays: the flow's log keeps this many days before today; -1 keeps every day.
	retainDays int
}

// newLogPolicy reads the flow's edges: an interaction is unlogged when one of its edges sets
// logs: false and none sets it true; the log keeps the longest retain_days its logged
// interactions set, and every day when one of them sets none (its events are kept for good).
func newLogPolicy(f *flow.Flow) logPolicy {
	p := logPolicy{off: map[string]bool{}, retainDays: -1}
	longest, unbounded := -1, false
	for _, in := range f.Interactions {
		on, off := false, false
		retain := -1
		for _, e := range in.Edges {
			o := e.Data.Observability
			if o == nil {
				continue
			}
			if o.Logs != nil {
				on, off = on || *o.Logs, off || !*o.Logs
			}
			if o.RetainDays != nil && *o.RetainDays > retain {
				retain = *o.RetainDays
			}
		}
		if off && !on {
			p.off[in.ID] = true
			continue
		}
		p.runLogged = true
		if retain < 0 {
			unbounded = true
		}
		longest = max(longest, retain)
	}
	if len(f.Interactions) == 0 {
		p.runLogged = true
	}
	if !unbounded && longest >= 0 {
		p.retainDays = longest
	}
	return p
}

// logs reports whether an event of the interaction (or of the run, for "") goes to the log.
func (p logPolicy) logs(interactionID string) bool {
	if interactionID == "" {
		return p.runLogged
	}
	return !p.off[interactionID]
}

// pruneLog removes the flow's log days older than its retain_days, and says so.
func (r *run) pruneLog() {
	if r.logPolicy.retainDays < 0 {
		return
	}
	removed, err := eventlog.Prune(r.o.Workspace, r.f.Name, r.logPolicy.retainDays, r.now())
	if err != nil {
		r.emit("", "", "warning", map[string]any{"message": "pruning the flow's old logs (retain_days): " + err.Error()})
	}
	if len(removed) > 0 {
		r.emit("", "", "logs_pruned", map[string]any{"retainDays": r.logPolicy.retainDays, "days": removed,
			"message": fmt.Sprintf("removed %d log file(s) older than retain_days %d: %s", len(removed), r.logPolicy.retainDays, strings.Join(removed, ", "))})
	}
}
