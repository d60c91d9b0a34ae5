package runtime

import (
	"strconv"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
)

// NetworkOpen is runtime.network's value that leaves the network of an agent routed through
// the model gateway as it is (it may connect anywhere: a package registry, say). Without it a
// confined gateway-routed agent may connect to the gateway's port only.
const NetworkOpen = "open"

// UseGateway points the agent's CLI at the run's model gateway: every provider's base-URL
// variable to baseURL (OpenAI's with /v1, as Codex expects), and token in place of the value
// of each API-key variable the agent has, so the real keys are nowhere in its environment.
// The caller has given those keys to the gateway. Non-essential traffic of Claude Code
// (update checks, telemetry) is turned off: a confined agent could not reach it anyway.
func (s *Spec) UseGateway(baseURL, token string, port int) {
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	for _, p := range gateway.Providers {
		url := baseURL
		if p == gateway.OpenAI {
			url += "/v1"
		}
		s.Env[gateway.BaseURLVars[p]] = url
		for _, k := range gateway.KeyVars[p] {
			if _, ok := s.Env[k]; ok {
				s.Env[k] = token
			}
		}
	}
	if _, ok := s.Env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"]; !ok {
		s.Env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
	}
	s.GatewayPort = port
}

// gatewayPorts are the only TCP ports a confined agent may connect to: the gateway's, for an
// agent routed through it whose runtime.network does not say otherwise; none (no limit) for
// every other agent.
func (s *Spec) gatewayPorts() []uint16 {
	if s.GatewayPort <= 0 || s.GatewayPort > 65535 || s.Network != "" {
		return nil
	}
	return []uint16{uint16(s.GatewayPort)}
}

// codexGatewayArgs make Codex use the gateway: its built-in OpenAI provider ignores
// OPENAI_BASE_URL (0.169 goes to api.openai.com over a WebSocket), so a provider of our own
// (-c overrides, as for its MCP servers) speaks the Responses API over HTTP to the gateway,
// with the token from the key variable the agent has. nil when the agent is not routed.
func codexGatewayArgs(s *Spec) []string {
	base := s.Env[gateway.BaseURLVars[gateway.OpenAI]]
	i := strings.Index(base, "/t/")
	if s.GatewayPort == 0 || i < 0 {
		return nil
	}
	// The token stays out of the command line (other users can read it): the gateway finds
	// it in the Authorization header, where Codex sends the key.
	base = base[:i] + "/v1"
	keyVar := ""
	for _, k := range gateway.KeyVars[gateway.OpenAI] {
		if _, ok := s.Env[k]; ok && keyVar == "" {
			keyVar = k
		}
	}
	if keyVar == "" {
		return nil // an account login: Codex talks to ChatGPT's own service, which the gateway does not serve
	}
	const p = "model_providers.agentcanvas."
	return []string{"-c", `model_provider="agentcanvas"`, "-c", p + `name="AgentCanvas gateway"`,
		"-c", p + "base_url=" + strconv.Quote(base), "-c", p + `wire_api="responses"`, "-c", p + "env_key=" + strconv.Quote(keyVar)}
}
