//go:build !linux

package runtime

// setAgentLimits does nothing where there is no oom_score_adj: without a guardian's
// inheritance, an agent's core-size limit is the sidecar's.
func setAgentLimits(int) error { return nil }
