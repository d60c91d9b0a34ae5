package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Block kinds of the stdout protocols (agent-stdout-protocols.md, agentcanvas-protocol.md §3).
const (
	BlockDependencyRequest = "dependency_request"
	BlockUserQuestion      = "user_question"
	BlockPhaseComplete     = "phase_complete"
	BlockError             = "error"
	BlockHandoff           = "handoff"
	BlockInvalid           = "invalid"
)

// Block is one protocol block found in an agent's text. It mirrors agentproto.Block so that
// the runtime's events do not depend on the parser's internals.
type Block struct {
	Kind   string         `json:"kind"`
	Line   int            `json:"line"`
	Fields map[string]any `json:"fields,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// BlockParser is the streaming stdout-protocol parser as the runtime uses it: text goes in
// in chunks of any size, finished blocks come out. One parser is used per turn.
type BlockParser interface {
	Write(chunk []byte) []Block
	Flush() []Block
}

// PendingKind says what a paused agent waits for.
type PendingKind string

const (
	PendingQuestion   PendingKind = "question"
	PendingDependency PendingKind = "dependency"
	PendingPhase      PendingKind = "phase_complete"
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
	b, _ := json.Marshal(struct {
		Type       string `json:"type"`
		QuestionID string `json:"questionId"`
		Answer     string `json:"answer"`
	}{"question_answer", id, answer})
	return string(b) + "\n"
}

// dependencyProvidedBlock is the injection format of dependency-request-handling.md.
func dependencyProvidedBlock(name, value string) string {
	// A value with newlines would break the key: value framing; indent continuation lines
	// the way the protocol's multi-line values are written.
	value = strings.ReplaceAll(value, "\n", "\n  ")
	return "[DEPENDENCY_PROVIDED]\nname: " + name + "\nvalue: " + value + "\n[/DEPENDENCY_PROVIDED]\n"
}

// secretDependencyTypes are the dependency types whose values are treated as secrets: they go
// into the agent's environment (and its stdin when interactive) but never into a prompt,
// which per-turn CLIs receive on their command line and send to a model provider.
func secretDependencyType(t string) bool {
	switch t {
	case "api_key", "env_variable", "service":
		return true
	}
	return false
}
