//go:build !linux

package runtime

// raiseOOMScore does nothing where there is no oom_score_adj.
func raiseOOMScore(string) error { return nil }
