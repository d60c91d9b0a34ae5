package runtime

import (
	"path/filepath"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// sharedReads are the read grants for the dependency folders linked into the agent's sandbox
// (runtime.shared): the links lead into the workspace, which a sandboxed agent may not
// otherwise read. Read only: the workspace's node_modules is the person's, not the agent's.
func sharedReads(folders []string) []confine.Rule {
	var rules []confine.Rule
	for _, f := range folders {
		if filepath.IsAbs(f) {
			rules = append(rules, confine.Rule{Access: confine.Read, Path: filepath.Clean(f)})
		}
	}
	return rules
}
