package flow

import "strings"

// workerWords mark the roles that do the work: they run in their own sandbox by default
// (cwdMode agentHome) and may edit the files there (docs/agents.md, "Role defaults").
var workerWords = []string{"worker", "coder", "engineer", "executor", "refiner", "developer", "implementer", "bidder", "contractor"}

// IsWorkerRole reports whether a role (free text, e.g. "worker", "senior-coder") is a
// worker's.
func IsWorkerRole(role string) bool {
	for _, w := range workerWords {
		if strings.Contains(role, w) {
			return true
		}
	}
	return false
}
