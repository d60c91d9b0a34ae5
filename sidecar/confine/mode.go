// Package confine confines agent processes with the kernel: on Linux, a Landlock ruleset built
// per agent from its role and backend says which files it may read and write and whether it may
// open TCP connections. Everything the agent starts inherits the ruleset, and nothing it does
// can lift it.
//
// Build makes an agent's Policy; the runtime applies it in the supervised spawn, on the one
// thread that forks the agent (RestrictThread), so the long-lived guardian that starts turn
// after turn stays unconfined and every turn gets exactly its own rules. Probe says what the
// kernel offers. docs/agents.md ("Security") lists the rules per role and backend.
package confine

import (
	"fmt"
	"strings"
)

// Mode is how hard a run insists on confinement: the editor's agentcanvas.confinement
// setting or `agentcanvas run --confine`.
type Mode string

const (
	// ModeAuto confines every agent where the kernel can, and runs them unconfined, after one
	// warning, where it cannot (no Landlock, macOS, Windows). The default.
	ModeAuto Mode = "auto"
	// ModeRequired refuses to start a run whose agents cannot be confined.
	ModeRequired Mode = "required"
	// ModeOff runs agents with all of the user's rights, as before confinement existed.
	ModeOff Mode = "off"
)

// Modes are the accepted values, the default first.
var Modes = []Mode{ModeAuto, ModeRequired, ModeOff}

// ParseMode reads a setting's or flag's value ("" is auto).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeAuto, nil
	}
	for _, m := range Modes {
		if s == string(m) {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("%q is not one of %s", s, strings.Join(names, ", "))
}

// Status is what the kernel offers, from Probe.
type Status struct {
	// ABI is the kernel's Landlock ABI version; 0 when there is no Landlock.
	ABI int
	// Reason says why there is none (or which test hook hides it).
	Reason string
}

// Available reports whether agents can be confined at all.
func (s Status) Available() bool { return s.ABI > 0 }

// String describes the status for logs and warnings.
func (s Status) String() string {
	if s.ABI > 0 {
		return fmt.Sprintf("Landlock ABI %d", s.ABI)
	}
	return "no Landlock: " + s.Reason
}

// MinScopeABI is the first Landlock ABI that scopes signals and abstract Unix sockets to the
// agent's own domain.
const MinScopeABI = 6

// NoLandlockEnv, set to 1, makes Probe report a kernel without Landlock: how tests show what
// happens on such a kernel (the run refused under required, the warning under auto) on one
// that has it.
const NoLandlockEnv = "AGENTCANVAS_TEST_NO_LANDLOCK"
