package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Backend ids (runtime.backendId in a flow).
const (
	BackendAuto    = "auto"
	BackendClaude  = "claude"
	BackendCodex   = "codex"
	BackendGemini  = "gemini"
	BackendCommand = "command"
	BackendDryRun  = "dry-run"
)

// Backends lists the backend ids a flow may name.
var Backends = []string{BackendAuto, BackendClaude, BackendCodex, BackendGemini, BackendCommand, BackendDryRun}

// turnInput is what one turn (one process invocation) is started with.
type turnInput struct {
	prompt string
	resume string // CLI session/thread id to resume ("" = fresh)
	turn   int    // 1-based
}

// backend knows how to start one turn of an agent and how to read what it prints.
type backend interface {
	id() string
	// argv returns the command line of a turn; argv[0] is looked up on the agent's PATH.
	// The prompt never goes into argv for command agents (stdin) and secrets never do.
	argv(s *Spec, in turnInput) ([]string, error)
	// stdin returns what is written to the process's stdin before it is closed (or kept open
	// when the spec is interactive).
	stdin(s *Spec, in turnInput) string
	// newDecoder reads one turn's stdout; s is the agent's spec (for the settings in force),
	// in the turn.
	newDecoder(s *Spec, in turnInput) decoder
	// followUp builds the next turn that carries answers to the agent: resumed CLI sessions get
	// the answers as their prompt; command agents get their original prompt plus the answers.
	followUp(original, answers, session string) turnInput
}

// decoder turns a turn's stdout into events. line gets one complete line (with its newline,
// except maybe the last line or a chunk of an over-long text line); end gets the exit code.
type decoder interface {
	line(l []byte) []Event
	end(exitCode int) turnOutcome
}

// stderrReader is a backend that finds events in its CLI's stderr lines as well (codex tells
// of a refused patch only there). It is called on the stderr reader's goroutine, so it keeps
// no state.
type stderrReader interface {
	stderrEvents(s *Spec, line string) []Event
}

// envSetter is a backend that sets variables of its own in its CLI's environment.
type envSetter interface {
	env(s *Spec) map[string]string
}

// rawEvent keeps a JSON line that no other event stands for: label (its type) as Text and
// the decoded line as Data, so nothing a CLI prints is lost or mistaken for a broken line.
func rawEvent(label string, l []byte) []Event {
	var m map[string]any
	if json.Unmarshal(l, &m) != nil {
		return nil
	}
	return []Event{{Kind: EventRaw, Text: label, Data: m}}
}

// decodeLine decodes one line of a CLI's JSON stream into v. A line that is a JSON object but
// not of v's shape (a field of another type than the runtime expects) is kept as a raw event,
// and a line that is no JSON object at all is reported as such; ok is true when v was filled.
func decodeLine(cli string, l []byte, v any) (evs []Event, ok bool) {
	err := json.Unmarshal(l, v)
	if err == nil {
		return nil, true
	}
	var m map[string]any
	if json.Unmarshal(l, &m) == nil {
		label, _ := m["type"].(string)
		return []Event{{Kind: EventRaw, Text: orNone(label) + " (not in the shape " + cli + "'s decoder reads: " + err.Error() + ")", Data: m}}, false
	}
	return nonJSONLine(cli, l), false
}

// turnOutcome is what a decoder knows once its process exited.
type turnOutcome struct {
	failed    bool
	reason    string
	reply     string
	sessionID string
	usage     Usage
	cost      float64
	costKnown bool
}

// autoOrder is the order in which backendId auto looks for a CLI on the agent's PATH.
var autoOrder = []string{BackendClaude, BackendCodex, BackendGemini}

// resolveBackend picks the backend for a spec. env is the agent's environment (for auto,
// which takes the first of claude, codex, gemini found on the agent's PATH).
func resolveBackend(s *Spec, env []string) (backend, error) {
	id := strings.TrimSpace(s.BackendID)
	if id == "" {
		id = BackendAuto
	}
	if id == BackendAuto {
		for _, c := range autoOrder {
			if _, err := lookPath(c, env); err == nil {
				id = c
				break
			}
		}
		if id == BackendAuto {
			return nil, fmt.Errorf("runtime: agent %s: backendId auto: none of claude, codex, gemini is on PATH (install one, or use backendId dry-run or command)", s.AgentID)
		}
	}
	switch id {
	case BackendClaude:
		return claudeBackend{}, nil
	case BackendCodex:
		return codexBackend{}, nil
	case BackendGemini:
		return geminiBackend{}, nil
	case BackendCommand:
		if len(s.Command) == 0 || s.Command[0] == "" {
			return nil, fmt.Errorf("runtime: agent %s: backendId command needs runtime.command (an argv list)", s.AgentID)
		}
		return commandBackend{}, nil
	case BackendDryRun, "dryrun", "dry_run":
		return dryRunBackend{}, nil
	}
	return nil, fmt.Errorf("runtime: agent %s: unknown backendId %q (want one of %s)", s.AgentID, id, strings.Join(Backends, ", "))
}

// A prompt never goes on a command line: every process on the machine, another agent's too,
// reads any process's arguments (/proc/PID/cmdline is not behind Landlock's ptrace rule, and
// a world's /proc is the system's), and Linux refuses an argument over 128 KiB. Each CLI
// reads it from its stdin (the backends' stdin).

func exe(s *Spec, def string) string {
	if s.Executable != "" {
		return s.Executable
	}
	return def
}

// cliFollowUp is the follow-up of the per-turn CLIs: resume the session with the answers.
// Without a session id (the CLI never reported one) the original prompt is repeated with
// the answers appended, in a fresh session.
func cliFollowUp(original, answers, session string) turnInput {
	if session == "" {
		return turnInput{prompt: original + "\n\n" + answers}
	}
	return turnInput{prompt: answers, resume: session}
}
