package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// secretsFlow: one agent whose runtime.env names a plain setting (DB_CHOICE) and a provider
// key (OPENAI_API_KEY), and whose runtime.secrets marks DB_PASSWORD secret.
const secretsFlow = `version: 0.2
agents:
  - {id: worker, role: local, runtime: {backendId: command, command: [bash, AGENT], env: [DB_CHOICE, OPENAI_API_KEY], secrets: [DB_PASSWORD]}}
systemNodes:
  - {id: bridge, type: bridge}
interactions:
  - id: i1
    patternId: protocol_bridge
    edges:
      - source: bridge
        target: worker
        data: {termination: {type: max_rounds, rounds: 1}, params: {rate_limit_per_min: 10}}
`

// Only secrets are redacted, and redaction never changes what the engine parses or matches.
// DB_CHOICE=postgres is a setting: the agent's question naming postgres is matched by
// --answers and its reply keeps "postgres"; the values of DB_PASSWORD (runtime.secrets) and
// OPENAI_API_KEY (a provider key) are in no log, transcript, checkpoint or outcome, though
// the question that names the password is still matched by the answers file.
func TestOnlySecretsAreRedacted(t *testing.T) {
	const password, key = "hunter2-very-secret", "sk-test-0123456789abcdef"
	t.Setenv("DB_CHOICE", "postgres")
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("DB_PASSWORD", password)
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `prompt=$(cat)
case "$AGENTCANVAS_TURN" in
1) printf '[USER_QUESTION]\ncategory: choice\nquestion: Use %s with the password %s?\noptions:\n  - yes\n  - no\nrequired: true\n[/USER_QUESTION]\n' "$DB_CHOICE" "$DB_PASSWORD";;
*) grep -o 'question_answer.*' <<<"$prompt" > `+dir+`/answer; echo "ANSWER: $DB_CHOICE, password $DB_PASSWORD, key $OPENAI_API_KEY";;
esac
`)
	ws, f := workspace(t, strings.ReplaceAll(secretsFlow, "AGENT", agent))
	answers := map[string]string{"Use postgres with the password " + password + "?": "yes"}
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Human: NonInteractive{Answers: answers}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "answer")); !strings.Contains(string(b), `"answer":"yes"`) {
		t.Errorf("the answers file's entry was not matched: the agent got %q", b)
	}
	res := out.Interactions[0].Result
	if !strings.Contains(res, "postgres") || strings.Contains(res, password) || strings.Contains(res, key) ||
		!strings.Contains(res, "[redacted:DB_PASSWORD]") || !strings.Contains(res, "[redacted:OPENAI_API_KEY]") {
		t.Errorf("result %q", res)
	}
	var found []string
	filepath.WalkDir(filepath.Join(ws, ".agentcanvas"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(password)) || bytes.Contains(b, []byte(key)) {
				found = append(found, p)
			}
		}
		return nil
	})
	if len(found) > 0 {
		t.Errorf("a secret is on disk in %v", found)
	}
	asked := eventsNamed(events(t, ws, f.Name), "question_asked")
	if len(asked) != 1 || !strings.Contains(fmt.Sprint(fld(asked[0], "fields")), "Use postgres with the password [redacted:DB_PASSWORD]?") {
		t.Errorf("question_asked %v", asked)
	}
}

// openPTY opens a pseudo-terminal pair (Linux /dev/ptmx).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var n int
	var ioErr error
	rc, _ := m.SyscallConn()
	rc.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr == nil {
			n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	})
	if ioErr != nil {
		m.Close()
		t.Fatal(ioErr)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// screen collects what a terminal shows (the master side) and waits for text to appear.
type screen struct {
	mu      sync.Mutex
	out     bytes.Buffer
	changed chan struct{}
}

func watch(m *os.File) *screen {
	sc := &screen{changed: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			k, err := m.Read(buf)
			sc.mu.Lock()
			sc.out.Write(buf[:k])
			sc.mu.Unlock()
			select {
			case sc.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return sc
}

func (sc *screen) waitFor(t *testing.T, text string) string {
	t.Helper()
	for {
		sc.mu.Lock()
		s := sc.out.String()
		sc.mu.Unlock()
		if strings.Contains(s, text) {
			return s
		}
		<-sc.changed
	}
}

// A secret typed at the prompt never shows on the terminal (golang.org/x/term reads it with
// echo off); a value of another type (a file) is echoed as usual. The check is the terminal's
// own: what the line discipline echoes comes out of the master side.
func TestSecretPromptsDoNotEcho(t *testing.T) {
	for _, c := range []struct {
		typ, value string
		echoed     bool
	}{
		{"api_key", "sk-typed-0123456789", false},
		{"env_variable", "typed-env-value-42", false},
		{"file", "assets/logo.png", true},
	} {
		t.Run(c.typ, func(t *testing.T) {
			m, s := openPTY(t)
			sc := watch(m)
			term := &Terminal{R: s, W: s}
			req := Request{RunID: "r", AgentID: "coder", InteractionID: "i1", ID: "dep_1", Kind: "dependency",
				Fields: map[string]any{"type": c.typ, "name": "THING", "description": "a thing", "required": true}}
			got := make(chan Response, 1)
			go func() {
				resp, err := term.Ask(context.Background(), req, nil)
				if err != nil {
					t.Error(err)
				}
				got <- resp
			}()
			sc.waitFor(t, "value (empty to reject): ")
			m.WriteString(c.value + "\n")
			resp := <-got
			if resp.Value != c.value {
				t.Fatalf("read %q", resp.Value)
			}
			s.WriteString("END-OF-TEST\n") // everything echoed comes before it
			shown := sc.waitFor(t, "END-OF-TEST")
			if strings.Contains(shown, c.value) != c.echoed {
				t.Errorf("echoed %v, want %v:\n%q", !c.echoed, c.echoed, shown)
			}
		})
	}
}

// An agent that prints its key does not hand it to the next one: the prompt another agent
// gets is redacted of the run's secrets (the attack: a planner echoing OPENAI_API_KEY into
// the instruction its reviewer acts on).
func TestASecretDoesNotTravelToAnotherAgent(t *testing.T) {
	const key = "sk-test-planner-only-0123456789"
	t.Setenv("OPENAI_API_KEY", key)
	dir := t.TempDir()
	a := script(t, dir, "a.sh", "cat >/dev/null\necho \"Instruction: use the key $OPENAI_API_KEY\"\n")
	b := script(t, dir, "b.sh", "cat > "+dir+"/b.prompt\necho \"Solution: done. Next request.\"\n")
	ws, f := workspace(t, pairFlow("", "runtime: {backendId: command, command: [bash, "+a+"], env: [OPENAI_API_KEY]}", "runtime: {backendId: command, command: [bash, "+b+"]}", 1))
	if _, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	p, _ := os.ReadFile(filepath.Join(dir, "b.prompt"))
	if strings.Contains(string(p), key) || !strings.Contains(string(p), "use the key [redacted:OPENAI_API_KEY]") {
		t.Fatalf("b's prompt:\n%s", p)
	}
}
