package validate

import "strings"

// TODO(merge): this table belongs to sidecar/pattern (branch `patterns`). When that package is
// on main, look patterns up with pattern.Lookup and take topology, roles and the default
// termination from it; keep only the role-matching logic here.

// patternInfo is what the validator needs to know about one library pattern.
type patternInfo struct {
	ID        string // "P05"
	PatternID string // "debate_judge"
	Topology  string
	// Default termination, inserted by the termination-required fix.
	Termination term
	// Roles the interaction's endpoints must play (missing-role).
	Roles []roleReq
	// Others is the minimum number of participants that play none of Roles' special roles
	// (debaters, workers, voters, bidders…), and OthersName names them in messages.
	Others     int
	OthersName string
	// Stages is the minimum number of distinct participants (pipelines).
	Stages int
}

// roleReq: at least Min participants play this role. A participant plays it when it is a
// system node of type System, or an agent whose role, id or name contains one of Words.
type roleReq struct {
	Name   string
	System string
	Words  []string
	Min    int
}

// term is a termination as the fixes write it; field order is the YAML key order.
type term struct {
	Type      string   `json:"type,omitempty"`
	Rounds    int      `json:"rounds,omitempty"`
	Ms        int      `json:"ms,omitempty"`
	Threshold float64  `json:"threshold,omitempty"`
	Metric    string   `json:"metric,omitempty"`
	Op        string   `json:"op,omitempty"`
	Value     *float64 `json:"value,omitempty"`
	Any       []term   `json:"any,omitempty"`
}

func one(v float64) *float64 { return &v }

var (
	roundsT  = func(n int) term { return term{Type: "max_rounds", Rounds: n} }
	timeoutT = term{Type: "timeout_ms", Ms: DefaultTimeoutMs}
	judgeT   = term{Type: "judge_decision"}
	anyT     = func(ts ...term) term { return term{Any: ts} }
	gateT    = func(metric string, v float64) term {
		return term{Type: "quality_gate", Metric: metric, Op: ">=", Value: one(v)}
	}

	judgeRole   = roleReq{Name: "judge", System: "judge", Words: []string{"judge"}, Min: 1}
	managerRole = roleReq{Name: "manager", System: "manager", Words: []string{"manager", "orchestrator", "lead", "initiator", "root"}, Min: 1}
)

// DefaultTimeoutMs, DefaultRateLimitPerMin and DefaultKeepLastN are what the fixes insert
// (spec §8: rate limit 10 msg/min by default).
const (
	DefaultTimeoutMs       = 600000
	DefaultRateLimitPerMin = 10
	DefaultKeepLastN       = 200
)

var patterns = []patternInfo{
	{ID: "P01", PatternID: "manager_worker", Topology: "manager_worker", Termination: anyT(roundsT(2), gateT("tests_passed", 1)),
		Roles: []roleReq{managerRole}, Others: 1, OthersName: "worker"},
	{ID: "P02", PatternID: "role_play_pair", Topology: "p2p", Termination: roundsT(6), Others: 2, OthersName: "role-play agent"},
	{ID: "P03", PatternID: "chat_chain_pipeline", Topology: "pipeline", Termination: anyT(roundsT(2), gateT("artifacts_verified", 1)), Stages: 2},
	{ID: "P04", PatternID: "sop_assembly_line", Topology: "pipeline", Termination: anyT(gateT("artifacts_verified", 1), roundsT(3)), Stages: 2},
	{ID: "P05", PatternID: "debate_judge", Topology: "debate_judge", Termination: anyT(roundsT(3), judgeT, timeoutT),
		Roles: []roleReq{judgeRole}, Others: 2, OthersName: "debater"},
	{ID: "P06", PatternID: "critic_refiner_curator", Topology: "p2p", Termination: anyT(roundsT(3), timeoutT),
		Roles: []roleReq{
			{Name: "critic", Words: []string{"critic"}, Min: 1},
			{Name: "refiner", Words: []string{"refiner", "refine"}, Min: 1},
		}},
	{ID: "P07", PatternID: "majority_vote", Topology: "broadcast", Termination: term{Type: "consensus_threshold", Threshold: 0.6}},
	{ID: "P08", PatternID: "self_consistency", Topology: "broadcast", Termination: roundsT(1),
		Roles: []roleReq{{Name: "aggregator", System: "aggregator", Words: []string{"aggregator", "selector", "ranker"}, Min: 1}}, Others: 1, OthersName: "drafter"},
	{ID: "P09", PatternID: "contract_net", Topology: "market_auction", Termination: anyT(timeoutT, judgeT),
		Roles: []roleReq{managerRole}, Others: 1, OthersName: "bidder"},
	{ID: "P10", PatternID: "bilateral_negotiation", Topology: "p2p", Termination: anyT(roundsT(5), timeoutT), Others: 2, OthersName: "negotiating party"},
	{ID: "P11", PatternID: "blackboard", Topology: "blackboard", Termination: roundsT(5),
		Roles: []roleReq{{Name: "blackboard", System: "blackboard", Words: []string{"blackboard"}, Min: 1}}, Others: 1, OthersName: "agent"},
	{ID: "P12", PatternID: "publish_subscribe", Topology: "broker", Termination: timeoutT, Stages: 2},
	{ID: "P13", PatternID: "broker_facilitator", Topology: "broker", Termination: timeoutT,
		Roles: []roleReq{{Name: "broker", System: "broker", Words: []string{"broker", "facilitator"}, Min: 1}}, Others: 2, OthersName: "requester or provider"},
	{ID: "P14", PatternID: "router_targeted", Topology: "router_targeted", Termination: timeoutT,
		Roles: []roleReq{{Name: "router", System: "router", Words: []string{"router"}, Min: 1}}, Others: 2, OthersName: "agent"},
	{ID: "P15", PatternID: "hierarchical_tree", Topology: "manager_worker", Termination: roundsT(2),
		Roles: []roleReq{managerRole}, Others: 2, OthersName: "sub-manager or worker"},
	{ID: "P16", PatternID: "red_team_judge", Topology: "debate_judge", Termination: anyT(roundsT(2), gateT("score", 0.8), timeoutT),
		Roles: []roleReq{judgeRole}, Others: 2, OthersName: "red-team or defender agent"},
	{ID: "P17", PatternID: "fact_check_verifier", Topology: "pipeline", Termination: anyT(gateT("citations_count", 2), roundsT(3)),
		Roles: []roleReq{{Name: "verifier", Words: []string{"verifier", "checker", "fact"}, Min: 1}, judgeRole}, Others: 1, OthersName: "producer"},
	{ID: "P18", PatternID: "plan_execute_reflect", Topology: "pipeline", Termination: roundsT(1),
		Roles: []roleReq{
			{Name: "planner", Words: []string{"planner", "plan"}, Min: 1},
			{Name: "executor", Words: []string{"executor", "execute", "coder", "actor"}, Min: 1},
		}},
	{ID: "P19", PatternID: "memory_sync", Topology: "blackboard", Termination: roundsT(1),
		Roles: []roleReq{{Name: "memory curator", System: "curator", Words: []string{"curator"}, Min: 1}}, Others: 1, OthersName: "agent"},
	{ID: "P20", PatternID: "protocol_bridge", Topology: "broker", Termination: timeoutT,
		Roles: []roleReq{{Name: "bridge", System: "bridge", Words: []string{"bridge"}, Min: 1}}, Others: 1, OthersName: "local agent"},
}

// lookupPattern finds a pattern by canonical id ("debate_judge") or alias ("P05", "p05").
func lookupPattern(id string) (patternInfo, bool) {
	for _, p := range patterns {
		if id == p.PatternID || strings.EqualFold(id, p.ID) {
			return p, true
		}
	}
	return patternInfo{}, false
}

// PatternIDs lists the canonical pattern ids, P01 to P20.
func PatternIDs() []string {
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = p.PatternID
	}
	return out
}
