package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
)

// gatewayFlags are agentcanvas run's model-gateway flags (docs/agents.md, Gateway).
type gatewayFlags struct {
	mode    *choiceFlag[string]
	pricing *string
}

func addGatewayFlags(fs *flag.FlagSet) *gatewayFlags {
	g := &gatewayFlags{mode: &choiceFlag[string]{engine.GatewayAuto, engine.ParseGateway}}
	fs.Var(g.mode, "gateway", "the model gateway's `MODE`: auto (CLI agents whose runtime.env names an API key go through it), logins (Claude Code signed in with an account too) or off")
	g.pricing = fs.String("pricing", "", "a JSON `FILE` of model prices (USD per million tokens) overriding the gateway's table, shaped as docs/agents.md (Gateway) shows")
	return g
}

// apply sets the options; a pricing file that does not read is an error naming it.
func (g *gatewayFlags) apply(o *engine.Options) error {
	o.Gateway = g.mode.v
	if *g.pricing == "" {
		return nil
	}
	b, err := os.ReadFile(*g.pricing)
	if err != nil {
		return fmt.Errorf("--pricing: %w", err)
	}
	p, err := gateway.ParsePricing(b)
	if err != nil {
		return fmt.Errorf("--pricing %s: %w", *g.pricing, err)
	}
	o.Pricing = p
	return nil
}
