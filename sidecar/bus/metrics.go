package bus

import "time"

// Metrics are the run's message metrics (the envelope document's
// AgentCommunicationMetrics).
type Metrics struct {
	TotalMessages       int                      `json:"totalMessages"`
	MessagesByType      map[string]int           `json:"messagesByType"`
	MessagesByPriority  map[string]int           `json:"messagesByPriority"`
	AverageResponseTime float64                  `json:"averageResponseTimeMs"`
	ErrorRate           float64                  `json:"errorRate"`
	Refused             int                      `json:"refused"`
	Expired             int                      `json:"expired"`
	Failed              int                      `json:"failed"`
	AgentActivity       map[string]AgentActivity `json:"agentActivity"`
}

// AgentActivity is one agent's share.
type AgentActivity struct {
	Sent            int     `json:"sent"`
	Received        int     `json:"received"`
	AvgResponseTime float64 `json:"avgResponseTimeMs"`
	responses       int
	responseSum     time.Duration
}

type metrics struct {
	Metrics
	asked    map[string]time.Time // message id → when a response was requested
	respSum  time.Duration
	respN    int
	attempts int
}

func newMetrics() metrics {
	return metrics{Metrics: Metrics{MessagesByType: map[string]int{}, MessagesByPriority: map[string]int{}, AgentActivity: map[string]AgentActivity{}}, asked: map[string]time.Time{}}
}

func (m *metrics) sent(e *Envelope) {
	m.attempts++
	m.TotalMessages++
	m.MessagesByType[e.Type]++
	m.MessagesByPriority[e.Priority]++
	a := m.AgentActivity[e.From]
	a.Sent++
	if p := e.Context.ParentMessageID; p != "" {
		if t, ok := m.asked[p]; ok {
			d := e.Timestamp.Sub(t)
			a.responses++
			a.responseSum += d
			a.AvgResponseTime = float64(a.responseSum.Milliseconds()) / float64(a.responses)
			m.respSum += d
			m.respN++
			delete(m.asked, p)
		}
	}
	m.AgentActivity[e.From] = a
	if e.Options != nil && e.Options.RequiresResponse {
		m.asked[e.ID] = e.Timestamp
	}
}

func (m *metrics) received(agent string, e *Envelope, now time.Time) {
	a := m.AgentActivity[agent]
	a.Received++
	m.AgentActivity[agent] = a
}

func (m *metrics) refused(e *Envelope) { m.attempts++; m.Refused++ }
func (m *metrics) expired(e *Envelope) { m.Expired++ }
func (m *metrics) failed(e *Envelope)  { m.Failed++ }

// Metrics returns a snapshot.
func (b *Bus) Metrics() Metrics {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.m.Metrics
	out.MessagesByType = copyMap(out.MessagesByType)
	out.MessagesByPriority = copyMap(out.MessagesByPriority)
	out.AgentActivity = map[string]AgentActivity{}
	for k, v := range b.m.AgentActivity {
		out.AgentActivity[k] = v
	}
	if b.m.respN > 0 {
		out.AverageResponseTime = float64(b.m.respSum.Milliseconds()) / float64(b.m.respN)
	}
	if b.m.attempts > 0 {
		out.ErrorRate = float64(out.Refused+out.Expired+out.Failed) / float64(b.m.attempts)
	}
	return out
}

func copyMap(m map[string]int) map[string]int {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
