package main

import (
	"errors"
	"flag"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// The person's folder rules and auto-apply limit as flags, shared by sandbox prepare, proposal
// apply and review, validate and run (the editor's agentcanvas.allowedFolders,
// agentcanvas.blockedFolders and agentcanvas.autoApply). With none given, every command
// behaves as it did before they existed.

type ruleFlags struct{ allow, block listFlag }

func addRuleFlags(fs *flag.FlagSet) *ruleFlags {
	r := &ruleFlags{}
	fs.Var(&r.allow, "allow", "only files inside this workspace-relative folder `DIR` (repeat or comma-separate; default: the whole workspace)")
	fs.Var(&r.block, "block", "also refuse this folder `DIR`: a name at any depth (build) or a path from the workspace root (src/gen); .agentcanvas, .git, node_modules and dist always are")
	return r
}

// rules checks the flags against the workspace root; a bad entry is a usage error naming
// the flag, never silently dropped.
func (r *ruleFlags) rules(root string) (safepath.Rules, error) {
	rules, errs := safepath.Config{Allowed: r.allow, Blocked: r.block, AllowedFrom: "--allow", BlockedFrom: "--block"}.Rules(root)
	return rules, errors.Join(errs...)
}

// choiceFlag is a flag whose value is one of a closed set, read by parse: run's --auto-apply
// (engine.ParseAutoApply) and --confine (confine.ParseMode).
type choiceFlag[T ~string] struct {
	v     T
	parse func(string) (T, error)
}

func (c *choiceFlag[T]) String() string { return string(c.v) }
func (c *choiceFlag[T]) Set(s string) error {
	v, err := c.parse(s)
	c.v = v
	return err
}
