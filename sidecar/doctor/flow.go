package doctor

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
)

// What `doctor FLOW` checks beyond the CLIs: for each agent of a CLI backend, how it will
// authenticate in the run — a key its runtime.env gives it (through the model gateway), or
// the CLI's login — and that the model API it will call answers a connection. A key set in
// the environment but not named in the agent's runtime.env never reaches the agent; that
// is said with the line of the flow to change.

// Agent is one agent of a flow, as FlowChecks needs it.
type Agent struct {
	ID      string
	Backend string   // backendId ("auto" resolved by FlowChecks)
	Env     []string // runtime.env
	At      string   // where its runtime is, FILE:LINE, for the fix
	Model   string   // runtime.model ("": the CLI's default)
	Limits  Limits   // what its model calls count against, when routed through the gateway
}

// FlowChecks checks each agent's authentication and model endpoint. cliChecks are the CLI
// checks Run made (auto takes the first CLI installed, as a run does).
func FlowChecks(ctx context.Context, env Env, agents []Agent, cliChecks []Check) []Check {
	env = env.withDefaults()
	var out []Check
	endpoints := map[string][]string{} // URL → the agents that call it
	var order []string
	for _, a := range agents {
		c, ok := ByBackend(resolveAuto(a.Backend, cliChecks))
		if !ok || !installed(cliChecks, c.Backend) {
			continue // not a CLI agent, or its CLI's own check says what is missing
		}
		check, endpoint, routed := agentAuth(env, a, c)
		out = append(out, check)
		if routed {
			out = append(out, spendCheck(a, c))
		}
		if endpoint != "" {
			if _, seen := endpoints[endpoint]; !seen {
				order = append(order, endpoint)
			}
			endpoints[endpoint] = append(endpoints[endpoint], a.ID)
		}
	}
	for _, e := range order {
		out = append(out, endpointCheck(ctx, env, e, endpoints[e]))
	}
	return out
}

// resolveAuto is the CLI an agent of backend id runs: auto takes the first installed.
func resolveAuto(id string, cliChecks []Check) string {
	if id != "" && id != "auto" {
		return id
	}
	for _, c := range CLIs {
		if installed(cliChecks, c.Backend) {
			return c.Backend
		}
	}
	return ""
}

// installed: the CLI's install check passed (or only warned of another version).
func installed(checks []Check, backend string) bool {
	for _, c := range checks {
		if c.Backend == backend && c.Name == backendProgram(backend) {
			return c.Status != Fail
		}
	}
	return false
}

func backendProgram(backend string) string {
	c, _ := ByBackend(backend)
	return c.Program
}

// agentAuth says how agent a will authenticate, and the model endpoint it will call ("" when
// it cannot authenticate: no endpoint is worth checking then); routed: its calls go through
// the run's model gateway.
func agentAuth(env Env, a Agent, c CLI) (ch Check, endpoint string, routed bool) {
	ch = Check{Name: a.ID + " key", Backend: c.Backend}
	var listed, given, unlisted []string
	for _, k := range c.KeyVars {
		switch {
		case slices.Contains(a.Env, k) && env.Getenv(k) != "":
			given = append(given, k)
		case slices.Contains(a.Env, k):
			listed = append(listed, k)
		case env.Getenv(k) != "":
			unlisted = append(unlisted, k)
		}
	}
	login := loginFound(env, c)
	switch {
	case len(given) > 0:
		how := "reaches " + a.ID + " through the run's model gateway (runtime.env)"
		if !isGatewayKey(given[0]) {
			how = "reaches " + a.ID + " (runtime.env)"
		}
		ch.Status, ch.Detail = OK, given[0]+" is set and "+how
		return ch, keyEndpoint(env, a, c), isGatewayKey(given[0])
	case login != "":
		ch.Status, ch.Detail = OK, a.ID+" uses your "+c.Program+" login ("+login+")"
		if len(unlisted) > 0 {
			ch.Detail += "; " + unlisted[0] + " is set but not in its runtime.env, so the agent does not get it"
		}
		return ch, c.LoginEndpoint, false
	case len(unlisted) > 0:
		ch.Status = Fail
		ch.Detail = fmt.Sprintf("%s is set, but %s's runtime.env does not name it, so it never reaches the agent (and %s has no login)", unlisted[0], a.ID, c.Program)
		ch.Fix = fmt.Sprintf("add %s to %s's runtime.env (%s): env: [%s]", unlisted[0], a.ID, a.At, strings.Join(append(slices.Clone(a.Env), unlisted[0]), ", "))
	case len(listed) > 0:
		ch.Status = Fail
		ch.Detail = fmt.Sprintf("%s's runtime.env names %s, which is not set, and %s has no login", a.ID, listed[0], c.Program)
		ch.Fix = fmt.Sprintf("export %s=<your key>   (or log in: %s)", listed[0], c.LogIn)
	default:
		ch.Status = Fail
		ch.Detail = fmt.Sprintf("%s has no key (its runtime.env names none of %s) and %s has no login", a.ID, strings.Join(c.KeyVars, ", "), c.Program)
		ch.Fix = fmt.Sprintf("log in: %s; or export %s=<your key> and add env: [%s] to %s's runtime (%s)", c.LogIn, c.KeyVars[0], c.KeyVars[0], a.ID, a.At)
	}
	return ch, "", false
}

// isGatewayKey: the run's model gateway holds this key and gives the agent a token instead.
func isGatewayKey(k string) bool {
	for _, ks := range gateway.KeyVars {
		if slices.Contains(ks, k) {
			return true
		}
	}
	return false
}

// keyEndpoint is the API a keyed agent's calls go to: the base URL its runtime.env gives
// (a proxy, a local model), else its provider's own.
func keyEndpoint(env Env, a Agent, c CLI) string {
	p := c.Provider
	if v := gateway.BaseURLVars[p]; slices.Contains(a.Env, v) && env.Getenv(v) != "" {
		return env.Getenv(v)
	}
	return gateway.DefaultUpstream[p]
}

// loginFound is the login file of c that is present, or "".
func loginFound(env Env, c CLI) string {
	for _, l := range c.Logins {
		if p := loginPath(env, c, l); p != "" && hasLogin(p, l.key) {
			return p
		}
	}
	return ""
}

// endpointCheck connects to endpoint (through the proxy the environment names, as the CLI
// would): a name that does not resolve or a connection refused fails a run at its first
// model call.
func endpointCheck(ctx context.Context, env Env, endpoint string, agents []string) Check {
	ch := Check{Name: "model API " + endpoint}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		ch.Status, ch.Detail = Fail, fmt.Sprintf("%q is not a URL (called by %s)", endpoint, strings.Join(agents, ", "))
		return ch
	}
	addr, via := dialAddress(env, u)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		ch.Status = Fail
		ch.Detail = fmt.Sprintf("unreachable%s: %v (called by %s)", via, err, strings.Join(agents, ", "))
		ch.Fix = "check the address (a base-URL variable in runtime.env, or the provider's) and your network or proxy"
		return ch
	}
	conn.Close()
	ch.Status, ch.Detail = OK, fmt.Sprintf("reachable%s (connected in %d ms; called by %s)", via, time.Since(start).Milliseconds(), strings.Join(agents, ", "))
	return ch
}

// dialAddress is host:port to connect to for u: the proxy's when the environment names one
// for u's scheme (loopback is never proxied), else u's own.
func dialAddress(env Env, u *url.URL) (addr, via string) {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[u.Scheme == "https"]
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		name := map[bool]string{true: "HTTPS_PROXY", false: "HTTP_PROXY"}[u.Scheme == "https"]
		p := firstNonEmpty(env.Getenv(name), env.Getenv(strings.ToLower(name)))
		if pu, err := url.Parse(p); p != "" && err == nil && pu.Host != "" {
			pport := firstNonEmpty(pu.Port(), "80")
			return net.JoinHostPort(pu.Hostname(), pport), " through the proxy " + pu.Host
		}
	}
	return net.JoinHostPort(host, port), ""
}
