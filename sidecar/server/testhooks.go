package server

import (
	"context"
	"encoding/json"
)

func init() {
	// agentcanvas/test/block waits until it is cancelled: it gives cancellation tests a
	// request that is certainly still running when $/cancelRequest arrives. Only with
	// Options.TestHooks (AGENTCANVAS_SERVE_TEST_HOOKS=1 for `agentcanvas serve`).
	register("agentcanvas/test/block", method{handle: (*Server).testBlock, async: true, testOnly: true})
}

func (s *Server) testBlock(ctx context.Context, _ json.RawMessage) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
