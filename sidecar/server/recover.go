package server

import (
	"context"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// recoverWorkspace finishes or rolls back an apply that was cut short (the editor reloaded,
// the machine went down, a terminal's apply was killed) and tells the person in a
// notification. It runs beside the server's start: it may wait for the workspace lock.
func (s *Server) recoverWorkspace(root string) {
	notice, err := proposal.Recover(context.Background(), root)
	switch {
	case err != nil:
		msg := "AgentCanvas: " + err.Error()
		s.logf("%s", msg)
		s.notify("window/showMessage", map[string]any{"type": msgError, "message": msg})
	case notice != "":
		msg := "AgentCanvas: " + notice
		s.logf("%s", msg)
		s.notify("window/showMessage", map[string]any{"type": msgWarning, "message": msg})
	}
}
