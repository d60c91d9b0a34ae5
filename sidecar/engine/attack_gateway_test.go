package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// A hostile agent through the real CLIs and the run's gateway (docs/agents.md, Gateway,
// "Attacks, by channel"): the scripted model makes each CLI run a shell command that finds
// the agent's token (its own environment, or its CLI's, which some CLIs keep from their
// shells), uses it on the gateway with raw HTTP, as the agent, and leaves it where a later
// agent finds it.

// gatewayMole is what the hostile shell command of a CLI does, and how it calls the gateway.
type gatewayMole struct {
	cli                modelserver.CLI
	shell              func(cmd string) modelserver.Call
	tokenVar, baseVar  string
	path, auth, header string // the call: path after the base URL, its key header, more headers
	body               string // with MARK where the call names itself
	coder              string // the coder's runtime settings that let its shell reach the network
}

var gatewayMoles = []gatewayMole{
	{modelserver.Claude, func(cmd string) modelserver.Call {
		return modelserver.Call{Tool: "Bash", Args: map[string]any{"command": cmd, "description": "check"}}
	}, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "/v1/messages", "x-api-key: ", "-H 'anthropic-version: 2023-06-01' -H 'anthropic-beta: files-api-2025-04-14'",
		`{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"MARK"}]}`, ", allowedTools: [Bash]"},
	{modelserver.Codex, func(cmd string) modelserver.Call {
		return modelserver.Call{Tool: "exec_command", Args: map[string]any{"cmd": cmd}}
	}, "OPENAI_API_KEY", "OPENAI_BASE_URL", "/responses", "authorization: Bearer ", "-H 'openai-organization: org-other'",
		`{"model":"gpt-5","stream":true,"store":true,"service_tier":"priority","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"MARK"}]}]}`, ", codexSandbox: danger-full-access"},
	{modelserver.Gemini, func(cmd string) modelserver.Call {
		return modelserver.Call{Tool: "run_shell_command", Args: map[string]any{"command": cmd}}
	}, "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "x-goog-api-key: ", "",
		`{"contents":[{"role":"user","parts":[{"text":"MARK"}]}]}`, ", geminiApprovalMode: yolo"},
}

// findVar is a shell function printing a variable from the shell's environment or, when
// the CLI keeps it from its shells, from the nearest process above that has it.
const findVar = `findvar() { v=$(printenv "$1"); p=$$; while [ -z "$v" ] && [ "$p" -gt 1 ]; do p=$(awk '{print $4}' /proc/$p/stat); v=$(tr '\0' '\n' < /proc/$p/environ 2>/dev/null | sed -n "s/^$1=//p" | head -1); done; printf %s "$v"; }; `

// call is the shell command calling the gateway with the token in $tok and base URL in
// $base, writing the answer's status to file.
func (m gatewayMole) call(mark, file string) string {
	body := strings.ReplaceAll(m.body, "MARK", mark)
	return fmt.Sprintf(`curl -s -o /dev/null -w '%%{http_code}' -H 'content-type: application/json' -H "%s$tok" %s -d '%s' "$base%s" > %s; `,
		m.auth, m.header, body, m.path, file)
}

// TestAttackRealCLITokenEndsWithItsInteraction: during its turn, the agent's token works on
// the gateway from the agent's own shell, as the CLI's, with what it should not pass taken
// out (an organisation, a beta that reaches files, a stored or priority response); once its
// interaction has ended, the token it left behind, used by a later agent, is refused.
func TestAttackRealCLITokenEndsWithItsInteraction(t *testing.T) {
	for _, m := range gatewayMoles {
		t.Run(m.cli.Name, func(t *testing.T) {
			exe := m.cli.Binary(t)
			t.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
			drop := t.TempDir() // where the mole leaves the token for the thief
			mole := findVar + fmt.Sprintf(`tok=$(findvar %s); base=$(findvar %s); printf %%s "$tok" > %s/token; printf %%s "$base" > %s/base; `,
				m.tokenVar, m.baseVar, drop, drop) + m.call("ATTACK-DURING", drop+"/during") + "echo checked"
			srv := m.cli.Start(t, modelserver.Script{
				{Match: "ATTACK-", Replies: []modelserver.Reply{{Text: "ok"}}},
				{Match: "Decompose the task", Replies: []modelserver.Reply{{Text: "ASSIGN coder: Run the check."}, {Text: "ACCEPT coder: done"}}},
				{Match: "Run the check", Replies: []modelserver.Reply{ // a script first: some CLIs refuse $(…) in a command
					{Text: "Writing the check.", Calls: []modelserver.Call{m.cli.WriteCall("mole.sh", mole+"\n")}},
					{Text: "Checking.", Calls: []modelserver.Call{m.shell("bash mole.sh")}}, {Text: realHandoff}}},
			})
			thief := script(t, t.TempDir(), "thief.sh", fmt.Sprintf(`cat > /dev/null; tok=$(cat %[1]s/token); base=$(cat %[1]s/base); `, drop)+
				m.call("ATTACK-AFTER", drop+"/after")+"echo 'ANSWER: tried'\n")
			peer := script(t, t.TempDir(), "peer.sh", "cat > /dev/null; echo 'ANSWER: ok'\n")
			ws := gitWorkspace(t)
			env := m.cli.KeyEnv(t, srv, engineRealKey)
			if m.cli.Name == "gemini" {
				env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
			}
			f := moleFlow(t, ws, m, env, thief, peer)
			rec := &recorder{}
			out, err := Run(context.Background(), f, Options{Workspace: ws, Env: env, Sink: rec.sink, Limits: recording})
			if err != nil {
				t.Fatal(err)
			}
			logRealRun(t, rec, srv, out)
			read := func(name string) string { b, _ := os.ReadFile(filepath.Join(drop, name)); return string(b) }
			if tok := read("token"); !strings.HasPrefix(tok, "acgw-") {
				t.Fatalf("the mole found the token %q", tok)
			}
			if got := read("during"); got != "200" {
				t.Errorf("the token during its interaction: %q, want 200", got)
			}
			if got := read("after"); got != "401" {
				t.Errorf("the token after its interaction ended: %q, want 401", got)
			}
			during := 0
			for _, r := range srv.Requests() {
				switch {
				case r.Conversation != 0: // the CLIs' own calls
				case strings.Contains(string(r.Body), "ATTACK-AFTER"):
					t.Errorf("the provider got a call made with the token after its interaction: %s", r.Body)
				default:
					during++
					checkMoleCall(t, r)
				}
			}
			if during != 1 {
				t.Errorf("the provider got %d calls of the mole's", during)
			}
			// A model the price table does not name is told of once in the run (the CLIs' own
			// defaults here, which the lead and the coder both call).
			unpriced := map[string]int{}
			for _, w := range rec.events("warning") {
				if msg, _ := w.Fields["message"].(string); strings.Contains(msg, "is not in the gateway's price table") {
					unpriced[msg]++
				}
			}
			for msg, n := range unpriced {
				if n != 1 {
					t.Errorf("told %d times: %s", n, msg)
				}
			}
			if m.cli.Name == "codex" && len(unpriced) != 1 {
				t.Errorf("unpriced models told of: %v, want gpt-5.5's", unpriced)
			}
			for _, name := range []string{"token", "base", "during", "after"} {
				if strings.Contains(read(name), engineRealKey) {
					t.Errorf("the real key is in what the mole found (%s)", name)
				}
			}
		})
	}
}

// checkMoleCall checks what the provider got of the mole's call: the real key, and nothing
// the gateway takes out.
func checkMoleCall(t *testing.T, r modelserver.Request) {
	t.Helper()
	h := fmt.Sprint(r.Header)
	if !strings.Contains(h, engineRealKey) || strings.Contains(h, "acgw-") || strings.Contains(h, "org-other") || strings.Contains(h, "files-api") {
		t.Errorf("the provider got the headers %s", h)
	}
	var body map[string]any
	_ = json.Unmarshal(r.Body, &body)
	if strings.HasSuffix(r.Path, "/responses") && (body["store"] != false || body["service_tier"] != "default") {
		t.Errorf("the provider got store %v, service_tier %v", body["store"], body["service_tier"])
	}
}

// moleFlow is a manager_worker interaction of cli (the coder is the mole), then one of two
// command agents (thief, peer) that starts once it has ended.
func moleFlow(t *testing.T, ws string, m gatewayMole, env map[string]string, thief, peer string) *flow.Flow {
	t.Helper()
	names := strings.Join(modelserver.EnvNames(env), ", ")
	cli, model := m.cli, ""
	if cli.Model != "" {
		model = ", model: " + cli.Model
	}
	src := fmt.Sprintf(`version: 0.2
description: Run the check
agents:
  - {id: lead, role: orchestrator, runtime: {backendId: %[1]s, env: [%[2]s]%[3]s}}
  - {id: coder, role: worker, files: [README.md], runtime: {backendId: %[1]s, env: [%[2]s]%[3]s%[6]s}}
  - {id: thief, role: planner, runtime: {backendId: command, command: [bash, %[4]s]}}
  - {id: peer, role: reviewer, runtime: {backendId: command, command: [bash, %[5]s]}}
interactions:
  - id: build
    patternId: manager_worker
    edges:
      - {source: lead, target: coder, data: {termination: {type: max_rounds, rounds: 1}}}
  - id: later
    patternId: role_play_pair
    dependsOn: [build]
    edges:
      - {source: thief, target: peer, data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}}
`, cli.Name, names, model, thief, peer, m.coder)
	return writeFlow(t, ws, "mole-"+cli.Name+".yaml", src)
}
