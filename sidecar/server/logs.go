package server

import (
	"context"
	"encoding/json"
)

func init() {
	register("agentcanvas/queryLogs", method{handle: (*Server).queryLogs, async: true})
}

func (s *Server) queryLogs(ctx context.Context, params json.RawMessage) (any, error) {
	var p QueryLogsParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Flow == "" {
		return nil, badParams("flow is required (the flow's name: its file name without .yaml)")
	}
	if s.svc.Logs == nil {
		return nil, notAvailable("log queries (sidecar/eventlog has not landed in this build)")
	}
	root, err := s.workspace()
	if err != nil {
		return nil, err
	}
	p.Workspace = root
	return s.svc.Logs.Query(ctx, p)
}
