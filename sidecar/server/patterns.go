package server

import (
	"context"
	"encoding/json"
)

func init() {
	register("agentcanvas/listPatterns", method{handle: (*Server).listPatterns, async: true})
	register("agentcanvas/instantiatePattern", method{handle: (*Server).instantiatePattern, async: true})
}

func (s *Server) listPatterns(ctx context.Context, _ json.RawMessage) (any, error) {
	if s.svc.Patterns == nil {
		return nil, notAvailable("the pattern catalog (sidecar/pattern has not landed in this build)")
	}
	return s.svc.Patterns.List(ctx)
}

// instantiatePattern expands a pattern into a subgraph whose ids are fresh with respect
// to the flow named by uri (when given), for the canvas to insert with editFlow.
func (s *Server) instantiatePattern(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		InstantiateParams
		flowRef
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.PatternID == "" {
		return nil, badParams("patternId is required (a canonical id such as debate_judge, or an alias such as P05)")
	}
	if s.svc.Patterns == nil {
		return nil, notAvailable("the pattern catalog (sidecar/pattern has not landed in this build)")
	}
	if p.URI != "" {
		a, _, err := s.flowAt(p.flowRef)
		if err != nil {
			return nil, err
		}
		p.ExistingIDs = flowIDs(a.flow)
		p.Layout = a.flow.Layout.Nodes
	}
	return s.svc.Patterns.Instantiate(ctx, p.InstantiateParams)
}
