package bus

import (
	"sync"
	"time"
)

// Retention bounds a blackboard (spec §8: keep_last_n or keep_last_days is required).
type Retention struct {
	KeepLastN    int `json:"keep_last_n,omitempty"`
	KeepLastDays int `json:"keep_last_days,omitempty"`
}

// Entry is one posting on a blackboard.
type Entry struct {
	Seq    int       `json:"seq"`
	Time   time.Time `json:"time"`
	Author string    `json:"author"`
	Kind   string    `json:"kind"` // e.g. hypothesis, partial_result, summary
	Text   string    `json:"text"`
}

// Blackboard is shared state that agents post to and read (P11, P19).
type Blackboard struct {
	mu      sync.Mutex
	ret     Retention
	now     func() time.Time
	entries []Entry
	seq     int
	trimmed int
}

// NewBlackboard makes a blackboard with a retention policy.
func NewBlackboard(ret Retention, now func() time.Time) *Blackboard {
	if now == nil {
		now = time.Now
	}
	return &Blackboard{ret: ret, now: now}
}

// Post adds an entry and applies retention.
func (b *Blackboard) Post(author, kind, text string) Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	e := Entry{Seq: b.seq, Time: b.now(), Author: author, Kind: kind, Text: text}
	b.entries = append(b.entries, e)
	b.trim()
	return e
}

func (b *Blackboard) trim() {
	if b.ret.KeepLastDays > 0 {
		cut := b.now().Add(-time.Duration(b.ret.KeepLastDays) * 24 * time.Hour)
		i := 0
		for i < len(b.entries) && b.entries[i].Time.Before(cut) {
			i++
		}
		b.trimmed += i
		b.entries = b.entries[i:]
	}
	if n := b.ret.KeepLastN; n > 0 && len(b.entries) > n {
		drop := len(b.entries) - n
		b.trimmed += drop
		b.entries = append([]Entry(nil), b.entries[drop:]...)
	}
}

// Entries returns the entries kept, oldest first.
func (b *Blackboard) Entries() []Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trim()
	return append([]Entry(nil), b.entries...)
}

// Trimmed counts entries removed by retention.
func (b *Blackboard) Trimmed() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.trimmed
}
