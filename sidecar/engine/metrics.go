package engine

import (
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// Metrics of a run: messages by type and priority, per-agent activity, error rate, retries,
// and tokens and cost where the backend reports them.
type Metrics struct {
	Messages           int            `json:"messages"`
	MessagesByType     map[string]int `json:"messagesByType"`
	MessagesByPriority map[string]int `json:"messagesByPriority"`
	Refused            int            `json:"refused"`
	Expired            int            `json:"expired"`
	ErrorRate          float64        `json:"errorRate"`
	Turns              int            `json:"turns"`
	FailedTurns        int            `json:"failedTurns"`
	// Retries counts what the run did again (the envelope document's retry count): a turn
	// retried after a recoverable [ERROR], a reply asked for again (reply_repair), a phase
	// sent back for rework; RetriesByKind splits it by those kinds.
	Retries       int                      `json:"retries"`
	RetriesByKind map[string]int           `json:"retriesByKind"`
	InputTokens   int64                    `json:"inputTokens"`
	OutputTokens  int64                    `json:"outputTokens"`
	CostUSD       float64                  `json:"costUsd"`
	CostKnown     bool                     `json:"costKnown"` // false when any backend reported no cost
	Agents        map[string]*AgentMetrics `json:"agents"`
}

// AgentMetrics is one agent's share.
type AgentMetrics struct {
	Sent              int     `json:"sent"`
	Received          int     `json:"received"`
	Turns             int     `json:"turns"`
	Retries           int     `json:"retries"`
	MeanResponseMs    float64 `json:"meanResponseMs"`
	InputTokens       int64   `json:"inputTokens"`
	OutputTokens      int64   `json:"outputTokens"`
	CostUSD           float64 `json:"costUsd"`
	totalResponseTime time.Duration
}

type metricSet struct {
	mu       sync.Mutex
	m        Metrics
	attempts int
	errors   int
}

func newMetricSet() *metricSet {
	return &metricSet{m: Metrics{MessagesByType: map[string]int{}, MessagesByPriority: map[string]int{}, RetriesByKind: map[string]int{}, Agents: map[string]*AgentMetrics{}, CostKnown: true}}
}

func (s *metricSet) agent(id string) *AgentMetrics {
	a := s.m.Agents[id]
	if a == nil {
		a = &AgentMetrics{}
		s.m.Agents[id] = a
	}
	return a
}

func (s *metricSet) addTurn(node string, res runtime.Result, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agent(node)
	a.Turns++
	a.totalResponseTime += took
	a.MeanResponseMs = float64(a.totalResponseTime.Milliseconds()) / float64(a.Turns)
	a.InputTokens += res.Usage.InputTokens
	a.OutputTokens += res.Usage.OutputTokens
	a.CostUSD += res.CostUSD
	s.m.Turns++
	s.attempts++
	if res.Status != runtime.StatusCompleted {
		s.m.FailedTurns++
		s.errors++
	}
	s.m.InputTokens += res.Usage.InputTokens
	s.m.OutputTokens += res.Usage.OutputTokens
	s.m.CostUSD += res.CostUSD
	if !res.CostKnown && res.Backend != runtime.BackendDryRun {
		s.m.CostKnown = false
	}
}

// Kinds of retries (Metrics.RetriesByKind).
const (
	RetryRecoverableError = "recoverable_error"
	RetryReplyRepair      = "reply_repair"
	RetryPhaseRework      = "phase_rework"
)

// addRetries counts n retries of one kind by node.
func (s *metricSet) addRetries(node, kind string, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.agent(node).Retries += n
	s.m.Retries += n
	s.m.RetriesByKind[kind] += n
}

func (s *metricSet) addBus(b bus.Metrics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.Messages += b.TotalMessages
	for k, v := range b.MessagesByType {
		s.m.MessagesByType[k] += v
	}
	for k, v := range b.MessagesByPriority {
		s.m.MessagesByPriority[k] += v
	}
	s.m.Refused += b.Refused
	s.m.Expired += b.Expired
	s.attempts += b.TotalMessages + b.Refused
	s.errors += b.Refused + b.Expired + b.Failed
	for id, act := range b.AgentActivity {
		a := s.agent(id)
		a.Sent += act.Sent
		a.Received += act.Received
	}
}

func (s *metricSet) snapshot() Metrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.m
	if s.attempts > 0 {
		out.ErrorRate = float64(s.errors) / float64(s.attempts)
	}
	out.MessagesByType = copyInts(s.m.MessagesByType)
	out.MessagesByPriority = copyInts(s.m.MessagesByPriority)
	out.RetriesByKind = copyInts(s.m.RetriesByKind)
	out.Agents = map[string]*AgentMetrics{}
	for k, v := range s.m.Agents {
		c := *v
		out.Agents[k] = &c
	}
	return out
}

func copyInts(m map[string]int) map[string]int {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
