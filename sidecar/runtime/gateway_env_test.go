package runtime

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/doctor"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// The real CLIs against a scripted model behind the model gateway, as the engine routes them
// (UseGateway): the agent holds a token, only the gateway the key.

const gwRealKey = "sk-REAL-provider-key-that-must-stay-in-the-sidecar-0123"

type gwRun struct {
	g       *gateway.Gateway
	spec    Spec
	mu      sync.Mutex
	charges []gateway.Charge
	refused []string
}

func (r *gwRun) calls() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.charges) }

// routeThroughGateway starts a gateway whose upstream and key come from s.Env (as the engine
// does) and points s at it.
func routeThroughGateway(t *testing.T, s *Spec, pricing gateway.Pricing, agentLimit float64) *gwRun {
	t.Helper()
	r := &gwRun{}
	keys, upstream := gateway.FromEnv(s.Env)
	g, err := gateway.Start(gateway.Options{Upstream: upstream, Pricing: pricing,
		OnCharge: func(c gateway.Charge) { r.mu.Lock(); r.charges = append(r.charges, c); r.mu.Unlock() },
		OnRefuse: func(ref gateway.Refusal) { r.mu.Lock(); r.refused = append(r.refused, ref.Message); r.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if agentLimit > 0 {
		g.Ledger.SetAgentLimit(s.AgentID, gateway.Limit{USD: agentLimit})
	}
	token, base := g.Register(gateway.Caller{Agent: s.AgentID, Interaction: "i1", Keys: keys})
	s.UseGateway(base, token, g.Port())
	r.g, r.spec = g, *s
	return r
}

// gwSpec is a worker of cli in its sandbox (the engine's layout, which confinement expects).
func gwSpec(t *testing.T, runID, agent string, cli modelserver.CLI, exe string, srv *modelserver.Server) Spec {
	ws := t.TempDir()
	work := filepath.Join(ws, ".agentcanvas", "sandboxes", runID, agent, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { RemoveTemp(runID) })
	return Spec{RunID: runID, AgentID: agent, BackendID: cli.Name, Executable: exe, Workspace: ws,
		CwdMode: CwdAgentHome, SandboxWork: work, Model: cli.Model, Env: cli.KeyEnv(t, srv, gwRealKey)}
}

// scanForKey fails the test if key is in any file beneath dirs.
func scanForKey(t *testing.T, key string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !e.Type().IsRegular() {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), key) {
				t.Errorf("the real key is in %s", p)
			}
			return nil
		})
	}
}

// Each CLI completes a scripted run through the gateway, confined where the kernel can (its
// network then limited to the gateway's port); the key it holds is the token, the provider
// sees the real key, the gateway meters both calls, and the real key is nowhere in the
// agent's environment, home, TMPDIR or sandbox.
func TestRealCLIsThroughGateway(t *testing.T) {
	for _, cli := range modelserver.CLIs {
		t.Run(cli.Name, func(t *testing.T) {
			exe := cli.Binary(t)
			t.Parallel()
			realSlots <- struct{}{}
			defer func() { <-realSlots }()
			srv := cli.Start(t, script(modelserver.Reply{Calls: []modelserver.Call{writeHello(cli)}}, modelserver.Reply{Text: handoff}))
			s := gwSpec(t, "r-gw-"+cli.Name, "coder", cli, exe, srv)
			s.Confine = confine.ModeAuto
			worker(&s)
			gw := routeThroughGateway(t, &s, nil, 0)
			for k, v := range s.Env {
				if strings.Contains(v, gwRealKey) {
					t.Fatalf("the agent's %s holds the real key", k)
				}
			}
			p, err := Start(context.Background(), s, "Write hello.txt in your working folder.")
			if err != nil {
				t.Fatal(err)
			}
			evs, res := drainWithin(t, p, nil, realDeadline)
			r := run{evs: evs, res: res, dir: s.SandboxWork, live: true, srv: srv}
			if res.Status != StatusCompleted {
				logRun(t, r)
				t.Fatalf("status %s: %s", res.Status, res.Reason)
			}
			if b, err := os.ReadFile(filepath.Join(s.SandboxWork, "hello.txt")); err != nil || string(b) != "hello\n" {
				t.Errorf("hello.txt: %q %v", b, err)
				logRun(t, r)
			}
			if srv.Answered() != 2 || gw.calls() < 2 {
				t.Errorf("model answered %d, gateway metered %d responses; want 2 model turns through it", srv.Answered(), gw.calls())
			}
			if got := gw.g.Ledger.Agent("coder"); got.Calls != 2 || got.Tokens != 2*(modelserver.DefaultUsage.InputTokens+modelserver.DefaultUsage.OutputTokens) || got.USD <= 0 {
				t.Errorf("the gateway's spend for coder: %+v", got)
			}
			least := doctorCLI(t, cli.Name).LeastRequest // doctor counts no more than the CLI sends
			for _, rq := range srv.Requests() {
				if rq.Method == http.MethodPost && len(rq.Body) < least {
					t.Errorf("%s: a %d-byte model request; doctor counts each as at least %d", rq.Path, len(rq.Body), least)
				}
				h := fmt.Sprint(rq.Header)
				if !strings.Contains(h, gwRealKey) || strings.Contains(h, "acgw-") {
					t.Errorf("%s reached the model with headers %s: want the real key, not the token", rq.Path, h)
				}
			}
			environ := strings.Join(s.environ(nil, 1), "\n")
			if strings.Contains(environ, gwRealKey) || !strings.Contains(environ, "acgw-") {
				t.Errorf("the agent's environment: real key present or token missing")
			}
			scanForKey(t, gwRealKey, s.Env["HOME"], s.Env["TMPDIR"], filepath.Dir(s.SandboxWork), agentTmpFor(s))
		})
	}
}

// doctorCLI is what doctor knows of the CLI name.
func doctorCLI(t *testing.T, name string) doctor.CLI {
	c, ok := doctor.ByBackend(name)
	if !ok {
		t.Fatalf("doctor does not know %s", name)
	}
	return c
}

// agentTmpFor is the agent's private TMPDIR under confinement ("" when it has none).
func agentTmpFor(s Spec) string {
	agentTemps.Lock()
	defer agentTemps.Unlock()
	return agentTemps.m[[2]string{s.RunID, s.AgentID}]
}

// perCall is what each scripted call of the limit tests bills: 30,000 input tokens (fewer
// than its request's bytes, as a real tokenizer gives) and 100 output.
var perCall = modelserver.Usage{InputTokens: 30_000, OutputTokens: 100}

// A scripted model that keeps calling tools is cut off mid-turn by the agent's limit: each
// call reserves its worst case first, the call that would not fit is refused with the
// limit's message, which the CLI reports, and the provider's bill stays within the limit.
func TestRealCLIsCutOffByAgentLimit(t *testing.T) {
	// $10 per million tokens of every kind: a call bills $0.301.
	flat := gateway.Price{Input: 10, CachedInput: 10, CacheWrite: 10, Output: 10}
	pricing := gateway.Pricing{gateway.Anthropic: {"": flat}, gateway.OpenAI: {"": flat}, gateway.Gemini: {"": flat}}
	const limit = 1.2 // room for 3 calls: each reserves about $0.5 (its request's size, and its output)
	for _, cli := range modelserver.CLIs {
		t.Run(cli.Name, func(t *testing.T) {
			exe := cli.Binary(t)
			t.Parallel()
			realSlots <- struct{}{}
			defer func() { <-realSlots }()
			var replies []modelserver.Reply
			for i := range 12 {
				replies = append(replies, modelserver.Reply{Calls: []modelserver.Call{cli.WriteCall(fmt.Sprintf("f%d.txt", i), "x\n")}, Usage: &perCall})
			}
			srv := cli.Start(t, script(replies...))
			s := gwSpec(t, "r-gw-limit-"+cli.Name, "looper", cli, exe, srv)
			worker(&s)
			gw := routeThroughGateway(t, &s, pricing, limit)
			p, err := Start(context.Background(), s, "Write files until told to stop.")
			if err != nil {
				t.Fatal(err)
			}
			evs, res := drainWithin(t, p, nil, realDeadline)
			through := srv.Answered()
			bill := float64(through) * float64(perCall.InputTokens+perCall.OutputTokens) * 10 / 1e6
			t.Logf("%d calls reached the model, billing $%.3f; refusals follow", through, bill)
			if through < 2 || bill > limit {
				t.Errorf("%d calls reached the model, billing $%.3f against a limit of $%.2f", through, bill, limit)
			}
			gw.mu.Lock()
			refused := append([]string(nil), gw.refused...)
			gw.mu.Unlock()
			if len(refused) == 0 || !strings.HasPrefix(refused[0], "spend limit reached: agent looper runtime.maxCostUsd $1.20, spent $") {
				t.Errorf("refusals %q", refused)
			}
			shown := res.Reason + res.Reply
			for _, e := range evs {
				shown += e.Text + e.Reason
			}
			if !strings.Contains(shown, "spend limit reached") {
				logRun(t, run{evs: evs, res: res, live: true, srv: srv})
				t.Errorf("the CLI did not report the refusal (status %s)", res.Status)
			}
		})
	}
}

// A confined agent routed through the gateway connects to the gateway's port and to no other;
// runtime.network open lifts that.
func TestGatewayRoutedAgentConnectsOnlyToGateway(t *testing.T) {
	if confine.Probe().ABI < confine.MinConnectABI {
		t.Skipf("%s: TCP rules need Landlock ABI %d", confine.Probe(), confine.MinConnectABI)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	g, err := gateway.Start(gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, otherPort, _ := net.SplitHostPort(other.Addr().String())
	probe := fmt.Sprintf(`for p in %d %s; do if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "port $p: open"; else echo "port $p: refused"; fi; done`, g.Port(), otherPort)
	for _, network := range []string{"", NetworkOpen} {
		s := Spec{RunID: "r-gw-net", AgentID: "probe" + network, BackendID: BackendCommand, Command: []string{"bash", "-c", probe},
			Workspace: t.TempDir(), Confine: confine.ModeRequired, Network: network, Env: map[string]string{"ANTHROPIC_API_KEY": gwRealKey}}
		token, base := g.Register(gateway.Caller{Agent: s.AgentID})
		s.UseGateway(base, token, g.Port())
		p, err := Start(context.Background(), s, "")
		if err != nil {
			t.Fatal(err)
		}
		_, res := drain(t, p, nil)
		wantOther := "refused"
		if network == NetworkOpen {
			wantOther = "open"
		}
		want := fmt.Sprintf("port %d: open\nport %s: %s", g.Port(), otherPort, wantOther)
		if strings.TrimSpace(res.Reply) != want {
			t.Errorf("network %q: reply %q, want %q", network, res.Reply, want)
		}
		if s.Env["ANTHROPIC_API_KEY"] != token {
			t.Errorf("the key variable holds %q, want the token", s.Env["ANTHROPIC_API_KEY"])
		}
	}
}

// UseGateway leaves no key in the environment and no token on Codex's command line (which
// other users can read); it sets every base URL.
func TestUseGatewayEnvAndCodexArgs(t *testing.T) {
	s := Spec{AgentID: "a", BackendID: BackendCodex, Env: map[string]string{"OPENAI_API_KEY": gwRealKey, "GEMINI_API_KEY": gwRealKey, "PATH": "/usr/bin"}}
	s.UseGateway("http://127.0.0.1:4242/t/acgw-tok", "acgw-tok", 4242)
	want := map[string]string{"OPENAI_API_KEY": "acgw-tok", "GEMINI_API_KEY": "acgw-tok", "PATH": "/usr/bin",
		"ANTHROPIC_BASE_URL": "http://127.0.0.1:4242/t/acgw-tok", "OPENAI_BASE_URL": "http://127.0.0.1:4242/t/acgw-tok/v1",
		"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:4242/t/acgw-tok", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
	if fmt.Sprint(s.Env) != fmt.Sprint(want) {
		t.Errorf("env %v\nwant %v", s.Env, want)
	}
	args := strings.Join(codexGatewayArgs(&s), " ")
	if strings.Contains(args, "acgw-tok") || !strings.Contains(args, `base_url="http://127.0.0.1:4242/v1"`) || !strings.Contains(args, `env_key="OPENAI_API_KEY"`) {
		t.Errorf("codex args %s", args)
	}
	if got := s.gatewayPorts(); len(got) != 1 || got[0] != 4242 {
		t.Errorf("ports %v", got)
	}
	s.Network = NetworkOpen
	if got := s.gatewayPorts(); got != nil {
		t.Errorf("network open: ports %v", got)
	}
}

// A hostile model behind the gateway, through the real Codex CLI, confined: its shell looks
// for the key in its environment, in every /proc/*/environ it can read (the test process,
// standing for the sidecar, has the key in its own environment, which the guardian inherits)
// and tries another port. It finds the token only, no key (not checked in /proc as root), and
// the port refused.
func TestRealCLIHostileAgentFindsNoKey(t *testing.T) {
	if confine.Probe().ABI < confine.MinConnectABI {
		t.Skipf("%s: the network rule needs Landlock ABI %d", confine.Probe(), confine.MinConnectABI)
	}
	cli := modelserver.Codex
	exe := cli.Binary(t)
	t.Setenv("AGENTCANVAS_TEST_SIDECAR_KEY", gwRealKey) // the sidecar's own environment holds it
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, port, _ := net.SplitHostPort(other.Addr().String())
	probe := `env > env.txt; n=0; for f in /proc/[0-9]*/environ /proc/[0-9]*/task/*/environ; do if grep -qa "sk-REAL" "$f" 2>/dev/null; then n=$((n+1)); echo "$f $(tr "\\0" " " < /proc/$(echo $f | cut -d/ -f3)/cmdline | cut -c1-80)" >> procs.txt; fi; done; echo "$n" > proc.txt; ` +
		`if (exec 3<>/dev/tcp/127.0.0.1/` + port + `) 2>/dev/null; then echo open > net.txt; else echo refused > net.txt; fi`
	// Codex hands a command's output back to the model after yield_time_ms (10 s by default) and
	// leaves it running; the model's next reply then ends the turn and the probe with it. On a
	// busy machine the walk over /proc takes longer than that: wait for it to finish.
	args := map[string]any{"cmd": probe, "yield_time_ms": 600000}
	srv := cli.Start(t, script(modelserver.Reply{Calls: []modelserver.Call{{Tool: "exec_command", Args: args}}}, modelserver.Reply{Text: handoff}))
	s := gwSpec(t, "r-gw-hostile", "coder", cli, exe, srv)
	s.Confine = confine.ModeRequired
	worker(&s)
	routeThroughGateway(t, &s, nil, 0)
	p, err := Start(context.Background(), s, "Look around.")
	if err != nil {
		t.Fatal(err)
	}
	evs, res := drainWithin(t, p, nil, realDeadline)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(s.SandboxWork, name))
		if err != nil {
			logRun(t, run{evs: evs, res: res, live: true, srv: srv})
			t.Fatalf("%s: %v (the probe did not run)", name, err)
		}
		return strings.TrimSpace(string(b))
	}
	if env := read("env.txt"); strings.Contains(env, gwRealKey) || !strings.Contains(env, "OPENAI_API_KEY=acgw-") {
		t.Errorf("the agent's environment holds the key, or not the token:\n%s", env)
	}
	// As root the agent has CAP_SYS_PTRACE, which passes Landlock's ptrace rule: it reads the
	// guardian's environment, the sidecar's (docs/agents.md, Security, says not to run as root).
	if n := read("proc.txt"); n != "0" && os.Geteuid() == 0 {
		t.Logf("as root, the agent read the sidecar's key in %s /proc/*/environ files (CAP_SYS_PTRACE); not checked", n)
	} else if n != "0" {
		b, _ := os.ReadFile(filepath.Join(s.SandboxWork, "procs.txt"))
		t.Errorf("the agent read the key in %s /proc/*/environ files:\n%s", n, b)
	}
	if got := read("net.txt"); got != "refused" {
		t.Errorf("connect to port %s: %s, want refused", port, got)
	}
}

// A provider that will not come back within the CLI's retries (nothing listens at its
// address) fails the turn at once, naming the endpoint: the gateway answers each CLI in a way
// it does not retry, so one call reaches the gateway. A fault that passes (the provider
// answers 503 once) is still retried, through the gateway, and the turn completes.
func TestRealCLIsFailFastWhenUnreachable(t *testing.T) {
	for _, cli := range modelserver.CLIs {
		t.Run(cli.Name, func(t *testing.T) {
			exe := cli.Binary(t)
			t.Parallel()
			realSlots <- struct{}{}
			defer func() { <-realSlots }()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			dead := "http://" + ln.Addr().String()
			ln.Close() // nothing listens there now
			srv := cli.Start(t, script(modelserver.Reply{Text: handoff, Error: &modelserver.APIError{Status: 503, Message: "scripted: try again", RetryAfter: "0"}, FailTimes: 1}))
			for _, c := range []struct {
				name, upstream string
			}{{"unreachable", dead}, {"transient", srv.URL}} {
				s := gwSpec(t, "r-gw-dead-"+cli.Name+"-"+c.name, "coder", cli, exe, srv)
				worker(&s)
				var refusals []gateway.Refusal
				var mu sync.Mutex
				g, err := gateway.Start(gateway.Options{Upstream: map[gateway.Provider]string{cliProvider(cli): c.upstream},
					OnRefuse: func(r gateway.Refusal) { mu.Lock(); refusals = append(refusals, r); mu.Unlock() }})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				keys, _ := gateway.FromEnv(s.Env)
				token, base := g.Register(gateway.Caller{Agent: "coder", Interaction: "i", Keys: keys})
				s.UseGateway(base, token, g.Port())
				p, err := Start(context.Background(), s, "Say hi.")
				if err != nil {
					t.Fatal(err)
				}
				evs, res := drainWithin(t, p, nil, realDeadline)
				mu.Lock()
				n := len(refusals)
				mu.Unlock()
				switch c.name {
				case "unreachable":
					if res.Status != StatusFailed || !strings.Contains(res.Reason+res.Reply, "API at "+dead+" cannot be reached") || n != 1 || !refusals[0].Unreachable {
						logRun(t, run{evs: evs, res: res, live: true, srv: srv})
						t.Errorf("unreachable: status %s, %d calls refused (want 1: not retried), reason %q", res.Status, n, res.Reason)
					}
				case "transient":
					if res.Status != StatusCompleted || n != 0 {
						logRun(t, run{evs: evs, res: res, live: true, srv: srv})
						t.Errorf("transient: status %s (%s), %d refusals: want the 503 retried", res.Status, res.Reason, n)
					}
				}
			}
		})
	}
}

// cliProvider is the provider whose API cli speaks.
func cliProvider(cli modelserver.CLI) gateway.Provider {
	switch cli.API {
	case modelserver.MessagesAPI:
		return gateway.Anthropic
	case modelserver.ResponsesAPI:
		return gateway.OpenAI
	}
	return gateway.Gemini
}
