package validate

import (
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// Patterns come from the library (sidecar/pattern): ids, aliases, topology and default
// termination. What the validator adds is how an interaction's nodes are recognised as
// playing a pattern's roles in flows people write by hand, where roles are free text
// ("evaluator", "team lead"): roleRules below, kept in step with the library's templates
// by TestInstantiatedPatternsValidateClean.

// patternInfo is what the validator needs to know about one library pattern.
type patternInfo struct {
	ID        string // "P05"
	PatternID string // "debate_judge"
	Topology  string
	// Termination is the pattern's default, inserted by the termination-required fix.
	Termination pattern.Termination
	// Roles the interaction's endpoints must play (missing-role).
	Roles []roleReq
	// Others is the minimum number of participants that play none of Roles' special roles
	// (debaters, workers, voters, bidders…), and OthersName names them in messages.
	Others     int
	OthersName string
	// OthersWhy says what the pattern's exchanges need them for, when that is not plain.
	OthersWhy string
	// Stages is the minimum number of distinct participants (pipelines).
	Stages int
	// Parties, when set, is the exact number of participants: a two-party pattern runs
	// between its first two, so a third would be drawn but never take part.
	Parties int
}

// roleReq: at least Min participants play this role. A participant plays it when it is a
// system node of type System, or an agent whose role, id or name contains one of Words.
type roleReq struct {
	Name   string
	System string
	Words  []string
	Min    int
}

var (
	judgeRole      = roleReq{Name: "judge", System: "judge", Words: []string{"judge"}, Min: 1}
	aggregatorRole = roleReq{Name: "aggregator", System: "aggregator", Words: []string{"aggregator", "selector", "ranker", "tally"}, Min: 1}
	managerRole    = roleReq{Name: "manager", System: "manager", Words: []string{"manager", "orchestrator", "lead", "initiator", "root"}, Min: 1}
)

// DefaultTimeoutMs, DefaultRateLimitPerMin and DefaultKeepLastN are what the fixes insert
// (spec §8: rate limit 10 msg/min by default).
const (
	DefaultTimeoutMs       = 600000
	DefaultRateLimitPerMin = 10
	DefaultKeepLastN       = 200
)

// roleRules says, per pattern, which roles its interactions' nodes must play.
var roleRules = map[string]patternInfo{
	"manager_worker": {
		Roles: []roleReq{managerRole}, Others: 1, OthersName: "worker"},
	"role_play_pair":      {Others: 2, OthersName: "role-play agent", Parties: 2},
	"chat_chain_pipeline": {Stages: 2},
	"sop_assembly_line":   {Stages: 2},
	"debate_judge": {
		Roles: []roleReq{judgeRole}, Others: 2, OthersName: "debater", OthersWhy: "the debaters answer each other's answers"},
	"critic_refiner_curator": {
		Roles: []roleReq{
			judgeRole,
			{Name: "critic", Words: []string{"critic"}, Min: 1},
			{Name: "refiner", Words: []string{"refiner", "refine"}, Min: 1},
		}},
	"majority_vote": {
		Roles: []roleReq{aggregatorRole}}, // voters and the tie-break: see roles()
	"self_consistency": {
		Roles: []roleReq{aggregatorRole}, Others: 1, OthersName: "drafter"},
	"contract_net": {
		Roles: []roleReq{managerRole}, Others: 1, OthersName: "bidder"},
	"bilateral_negotiation": {Others: 2, OthersName: "negotiating party", Parties: 2},
	"blackboard": {
		Roles: []roleReq{{Name: "blackboard", System: "blackboard", Words: []string{"blackboard"}, Min: 1}}, Others: 1, OthersName: "agent"},
	"publish_subscribe": {
		Roles: []roleReq{{Name: "broker", System: "broker", Words: []string{"broker"}, Min: 1}}, Others: 2, OthersName: "publisher or subscriber"},
	"broker_facilitator": {
		Roles: []roleReq{{Name: "broker", System: "broker", Words: []string{"broker", "facilitator"}, Min: 1}}, Others: 2, OthersName: "requester or provider"},
	"router_targeted": {
		Roles: []roleReq{{Name: "router", System: "router", Words: []string{"router"}, Min: 1}}, Others: 2, OthersName: "agent"},
	"hierarchical_tree": {
		Roles: []roleReq{managerRole}, Others: 2, OthersName: "sub-manager or worker"},
	// The red team attacks the defender and both report to the judge: a drawing without one of
	// the two sides cannot run those exchanges (the run engine finds them by these words).
	"red_team_judge": {
		Roles: []roleReq{
			judgeRole,
			{Name: "red team", Words: []string{"red", "attacker"}, Min: 1},
			{Name: "defender", Words: []string{"defender", "blue"}, Min: 1},
		}},
	"fact_check_verifier": {
		Roles: []roleReq{{Name: "verifier", Words: []string{"verifier", "checker", "fact"}, Min: 1}, judgeRole}, Others: 1, OthersName: "producer"},
	"plan_execute_reflect": {
		Roles: []roleReq{
			{Name: "planner", Words: []string{"planner", "plan"}, Min: 1},
			{Name: "executor", Words: []string{"executor", "execute", "coder", "actor"}, Min: 1},
		}},
	"memory_sync": {
		Roles: []roleReq{
			{Name: "memory curator", System: "curator", Words: []string{"curator"}, Min: 1},
			{Name: "shared memory (blackboard)", System: "blackboard", Words: []string{"blackboard", "memory"}, Min: 1},
		}, Others: 1, OthersName: "agent"},
	"protocol_bridge": {
		Roles: []roleReq{{Name: "bridge", System: "bridge", Words: []string{"bridge"}, Min: 1}}, Others: 1, OthersName: "local agent"},
}

// lookupPattern finds a pattern by canonical id ("debate_judge") or alias ("P05", "p05"),
// with the validator's role rules.
func lookupPattern(id string) (patternInfo, bool) {
	p, ok := pattern.Lookup(id)
	if !ok {
		return patternInfo{}, false
	}
	info := roleRules[p.PatternID]
	info.ID, info.PatternID, info.Topology, info.Termination = p.ID, p.PatternID, p.Topology, p.DefaultTermination
	return info, true
}

// lookup is lookupPattern, remembered for the length of one validation.
func (c *checker) lookup(id string) (patternInfo, bool) {
	if p, ok := c.patterns[id]; ok {
		return p, p.PatternID != ""
	}
	p, _ := lookupPattern(id)
	if c.patterns == nil {
		c.patterns = map[string]patternInfo{}
	}
	c.patterns[id] = p
	return p, p.PatternID != ""
}

// PatternIDs lists the canonical pattern ids, P01 to P20.
func PatternIDs() []string { return slices.Clone(pattern.CanonicalIDs) }
