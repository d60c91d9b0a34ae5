package engine

import (
	"slices"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// Secrets. Only values that are secret are redacted: the provider key variables, the names a
// flow lists in runtime.secrets, an MCP server's variables, the values the editor passes from
// its secret storage (Options.Env), and the values given for secret dependency types (api_key,
// env_variable, service). Nothing else is: DB_CHOICE=postgres read from the environment is no
// secret, and "postgres" in a reply stays "postgres".
//
// The engine parses and matches what agents wrote as they wrote it (a secret in a line does
// not change what the line says, nor which --answers entry a request matches) and redacts at
// every place text leaves it: the events it logs and sends, the outcomes and pending requests
// it keeps, the prompts it sends other agents, the memory notes and proposal notes it writes.

// secretSet is the run's secret values, with the name each is shown as: the runtime's
// Redactor, shared by the run's goroutines.
type secretSet struct {
	mu  sync.Mutex
	red runtime.Redactor
}

// add registers a secret value under its name.
func (s *secretSet) add(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.red.Add(name, value)
}

// str is text with every secret value replaced by [redacted:NAME].
func (s *secretSet) str(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.red.Text(text)
}

// any redacts every string in v (maps and lists walked; other values as they are); v itself
// is never changed: what holds a secret is copied.
func (s *secretSet) any(v any) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.red.Value(v)
}

// fields redacts an event's fields.
func (s *secretSet) fields(f map[string]any) map[string]any {
	if f == nil {
		return nil
	}
	return s.any(f).(map[string]any)
}

// secretNames are the variables of an agent's environment env whose values are secret,
// besides the provider key variables: those the flow lists in runtime.secrets, an MCP
// server's, and those whose value the editor gave (given, from its secret storage).
func secretNames(env, given map[string]string, listed, mcp []string) []string {
	out := append(append([]string(nil), listed...), mcp...)
	for n := range env {
		if _, ok := given[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// learnSecrets registers the secret values of an agent's environment.
func (r *run) learnSecrets(env map[string]string, names []string) {
	for n, v := range env {
		if runtime.SecretName(n) || slices.Contains(names, n) {
			r.secrets.add(n, v)
		}
	}
}
