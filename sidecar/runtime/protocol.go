package runtime

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
)

// PendingKind says what a paused agent waits for.
type PendingKind string

const (
	PendingQuestion   PendingKind = "question"
	PendingDependency PendingKind = "dependency"
	PendingPhase      PendingKind = "phase_complete"
	// PendingError is an [ERROR] with recovery notify_user: the person chooses retry, skip or
	// stop (ResolveError). Spec.Checkpoint also sees one, with ID "error", before an [ERROR]
	// fails the agent (fatal, checkpoint_and_fail) or pauses it (pause_and_retry).
	PendingError PendingKind = "error"
)

// Pending is a request of the agent that blocks it until it is resolved by Answer,
// ProvideDependency, RejectDependency or Continue (or by the dependency timeout).
type Pending struct {
	ID     string         `json:"id"`
	Kind   PendingKind    `json:"kind"`
	Fields map[string]any `json:"fields"`
	// Outcome is set on EventAnswered: "answered", "provided", "rejected", "timeout",
	// "continued". Values are never included.
	Outcome string `json:"outcome,omitempty"`
	Line    int    `json:"line,omitempty"`
	// Deadline is when an unanswered dependency request times out (Spec.DependencyTimeout);
	// zero for questions and phases, which wait for as long as it takes.
	Deadline time.Time `json:"deadline,omitzero"`
	// raw are the block's fields as the agent printed them, before secrets were redacted
	// from Fields (RawFields).
	raw map[string]any
}

// RawFields are the request's fields as the agent printed them: for what the engine matches
// (an answers file's keys) and answers, never for what it shows, logs or keeps.
func (p *Pending) RawFields() map[string]any {
	if p.raw == nil {
		return p.Fields
	}
	return p.raw
}

func (p *Pending) str(name string) string {
	if v, ok := p.Fields[name]; ok {
		if s, ok := v.(string); ok {
			return s
		}
		return fmt.Sprint(v)
	}
	return ""
}

// Required reports the block's required field (true when absent or unparseable, the safe side).
func (p *Pending) Required() bool {
	switch v := p.Fields["required"].(type) {
	case bool:
		return v
	case string:
		return !strings.EqualFold(strings.TrimSpace(v), "false")
	}
	return true
}

// questionAnswerJSON is the stdin answer format of agent-stdout-protocols.md §2.
func questionAnswerJSON(id, answer string) string {
	b, _ := agentproto.FormatQuestionAnswer(id, answer) // id is ours, never empty
	return string(b)
}

// dependencyProvidedBlock is the injection format of dependency-request-handling.md.
func dependencyProvidedBlock(name, value string) string {
	s, err := agentproto.FormatDependencyProvided(name, value)
	if err != nil { // the parser only passes one-line, non-empty names
		return ""
	}
	return s
}

// secretDependencyTypes are the dependency types whose values are treated as secrets: they go
// into the agent's environment (and its stdin when interactive) but never into a prompt,
// which per-turn CLIs receive on their command line and send to a model provider.
func secretDependencyType(t string) bool { return SecretDependencyType(t) }

// SecretDependencyType reports whether values of a dependency type are secrets (api_key,
// env_variable, service): the engine redacts them as the runtime does.
func SecretDependencyType(t string) bool {
	switch t {
	case "api_key", "env_variable", "service":
		return true
	}
	return false
}
