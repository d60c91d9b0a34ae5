package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// The editor's settings the sidecar honours (package.json's agentcanvas.* contribution).
const (
	settingAllowed   = "agentcanvas.allowedFolders"
	settingBlocked   = "agentcanvas.blockedFolders"
	settingAutoApply = "agentcanvas.autoApply"
	settingConfine   = "agentcanvas.confinement"
	settingGateway   = "agentcanvas.gateway"
	settingPricing   = "agentcanvas.gatewayPricing"
)

// settingsParams is the agentcanvas section as the extension sends it, in initialize's
// initializationOptions and in workspace/didChangeConfiguration's settings.agentcanvas. Each
// value is decoded on its own, so one of the wrong type is reported without losing the others;
// an absent (or null) value keeps the current one.
type settingsParams struct {
	AllowedFolders json.RawMessage `json:"allowedFolders"`
	BlockedFolders json.RawMessage `json:"blockedFolders"`
	AutoApply      json.RawMessage `json:"autoApply"`
	Confinement    json.RawMessage `json:"confinement"`
	Gateway        json.RawMessage `json:"gateway"`
	GatewayPricing json.RawMessage `json:"gatewayPricing"`
}

// settings are the session's current values: the lists as given and what they mean.
type settings struct {
	config    safepath.Config  // the folder lists as given
	autoApply engine.AutoApply // the editor's default is off: nothing is applied unreviewed
	confine   confine.Mode     // how agent processes are confined (default auto)
	gateway   string           // the model gateway's mode (default auto)
	pricing   gateway.Pricing  // the gateway's price overrides
	limits    engine.Limits    // what config and autoApply mean, for every request and run
	gen       int              // bumped on every change; analyses remember the one they used
	warned    string           // the last problems shown, so a repeat is not shown again
}

func defaultSettings() settings {
	st := settings{config: safepath.Config{AllowedFrom: settingAllowed, BlockedFrom: settingBlocked}, autoApply: engine.AutoApplyOff, confine: confine.ModeAuto, gateway: engine.GatewayAuto}
	st.limits = engine.Limits{AutoApply: st.autoApply, AutoApplyFrom: settingAutoApply, Confine: st.confine, ConfineFrom: settingConfine, Gateway: st.gateway}
	return st
}

// limits are the person's limits now (engine.Options.Limits for the session's runs).
func (s *Server) limits() engine.Limits {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	return s.settings.limits
}

// settingsGen is the current settings generation.
func (s *Server) settingsGen() int {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	return s.settings.gen
}

// applySettings takes new values (from where: "initializationOptions" or
// "workspace/didChangeConfiguration"). An unusable value or entry is left out with a warning
// naming the setting, shown once; the rest takes effect. It reports whether anything changed.
func (s *Server) applySettings(p settingsParams, where string) bool {
	var problems []string
	s.settingsMu.Lock()
	st := s.settings
	readList := func(raw json.RawMessage, name string, into *[]string) {
		if isAbsent(raw) {
			return
		}
		var l []string
		if err := json.Unmarshal(raw, &l); err != nil {
			problems = append(problems, fmt.Sprintf("%s: want a list of workspace-relative folders, got %s; the setting is ignored", name, clip(raw)))
			return
		}
		*into = l
	}
	readList(p.AllowedFolders, settingAllowed, &st.config.Allowed)
	readList(p.BlockedFolders, settingBlocked, &st.config.Blocked)
	// A bad autoApply is the strictest value, rather than the flow's word, until it is
	// corrected; a bad confinement the default: a typo must not take the confinement away.
	st.autoApply = readChoice(p.AutoApply, st.autoApply, engine.ParseAutoApply, engine.AutoApplyOff, func() {
		problems = append(problems, fmt.Sprintf("%s: %s is not one of %v; nothing is applied automatically until it is corrected", settingAutoApply, clip(p.AutoApply), engine.AutoApplyValues))
	})
	st.confine = readChoice(p.Confinement, st.confine, confine.ParseMode, confine.ModeAuto, func() {
		problems = append(problems, fmt.Sprintf("%s: %s is not one of %v; agents are confined where the kernel can (auto) until it is corrected", settingConfine, clip(p.Confinement), confine.Modes))
	})
	st.gateway = readChoice(p.Gateway, st.gateway, engine.ParseGateway, engine.GatewayAuto, func() {
		problems = append(problems, fmt.Sprintf("%s: %s is not one of %v; agents with an API key go through the gateway (auto) until it is corrected", settingGateway, clip(p.Gateway), engine.GatewayModes))
	})
	if !isAbsent(p.GatewayPricing) {
		if pr, err := gateway.ParsePricing(p.GatewayPricing); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v; the project's prices apply until it is corrected", settingPricing, err))
			st.pricing = nil
		} else {
			st.pricing = pr
		}
	}
	rules, errs := st.config.Rules(s.workspaceRoot())
	for _, err := range errs {
		msg := err.Error()
		var ee *safepath.EntryError
		if errors.As(err, &ee) {
			msg += "; the entry is ignored"
		}
		problems = append(problems, msg)
	}
	limits := engine.Limits{Rules: rules, AutoApply: st.autoApply, AutoApplyFrom: settingAutoApply, Confine: st.confine, ConfineFrom: settingConfine, Gateway: st.gateway, Pricing: st.pricing}
	changed := describeLimits(limits) != describeLimits(st.limits)
	st.limits = limits
	if changed {
		st.gen++
	}
	warn := strings.Join(problems, "\n")
	show := warn != "" && warn != st.warned
	st.warned = warn
	s.settings = st
	s.settingsMu.Unlock()

	if show {
		msg := fmt.Sprintf("AgentCanvas settings (%s): %s", where, strings.Join(problems, "; "))
		s.logf("%s", msg)
		s.notify("window/showMessage", &protocol.ShowMessageParams{Type: msgWarning, Message: msg})
	}
	if changed {
		s.logMessage(msgInfo, "settings: "+describeLimits(limits))
	}
	return changed
}

// describeLimits says what the limits are, for the log (and to tell a change).
func describeLimits(l engine.Limits) string {
	allowed := "the whole workspace"
	if l.Rules.Allowed != nil {
		allowed = "[" + strings.Join(l.Rules.Allowed, ", ") + "]"
	}
	blocked := append(append([]string(nil), safepath.DefaultBlocked...), l.Rules.Blocked...)
	s := fmt.Sprintf("allowed folders %s; blocked folders [%s]; autoApply %s; confinement %s", allowed, strings.Join(blocked, ", "), l.AutoApply, l.Confine)
	if l.Gateway != "" && l.Gateway != engine.GatewayAuto || len(l.Pricing) > 0 {
		p, _ := json.Marshal(l.Pricing)
		s += fmt.Sprintf("; gateway %s, prices %s", l.Gateway, p)
	}
	return s
}

// readChoice reads a setting whose value is one of a closed set: absent (or null) keeps cur;
// a value of the wrong type or outside the set calls bad and gives fallback.
func readChoice[T any](raw json.RawMessage, cur T, parse func(string) (T, error), fallback T, bad func()) T {
	if isAbsent(raw) {
		return cur
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		bad()
		return fallback
	}
	v, err := parse(s)
	if err != nil {
		bad()
		return fallback
	}
	return v
}

func isAbsent(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
