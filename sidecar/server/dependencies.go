package server

import (
	"context"
	"encoding/json"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
)

// checkDependencyValue lets the editor check a value as the person types it, with the rules
// the engine applies when the value is given (one set of rules for the terminal, the editor
// and --answers). The value is checked in memory and never logged.
func init() {
	register("agentcanvas/checkDependencyValue", method{handle: (*Server).checkDependencyValue})
}

// CheckDependencyParams: agentcanvas/checkDependencyValue.
type CheckDependencyParams struct {
	Type  string `json:"type"`
	Value string `json:"value"` // never logged
}

// CheckDependencyResult says why the value would be refused ("" when it would be taken).
type CheckDependencyResult struct {
	Valid bool   `json:"valid"`
	Error string `json:"error,omitempty"`
}

func (s *Server) checkDependencyValue(_ context.Context, params json.RawMessage) (any, error) {
	var p CheckDependencyParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Type == "" {
		return nil, badParams("type is required")
	}
	if err := agentproto.ValidateDependencyValue(p.Type, p.Value); err != nil {
		return CheckDependencyResult{Error: err.Error()}, nil
	}
	return CheckDependencyResult{Valid: true}, nil
}
