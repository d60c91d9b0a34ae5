package bus

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Errors a Send can return. The engine logs each refusal as an event.
var (
	ErrDenied      = errors.New("bus: access denied")
	ErrNoRecipient = errors.New("bus: unknown recipient")
	ErrRoute       = errors.New("bus: the topology does not allow this route")
	ErrMailboxFull = errors.New("bus: mailbox full")
)

// DefaultRateLimitPerMin applies to brokers and routers when the flow sets none (spec §8).
const DefaultRateLimitPerMin = 10

// Rule lets a sender send some message types to some recipients ("*" for any).
type Rule struct {
	Types []string `json:"types"`
	To    []string `json:"to"`
}

// Config describes one interaction's bus.
type Config struct {
	// Topology: p2p, manager_worker, pipeline, blackboard, market_auction, debate_judge,
	// broker, router_targeted, broadcast.
	Topology string
	// Members are the node ids on the bus.
	Members []string
	// Hub is the manager, broker, router or blackboard node, when the topology has one.
	Hub string
	// Stages orders a pipeline.
	Stages []string
	// Tags lets router_targeted deliver "tag:<t>" to every member carrying t.
	Tags map[string][]string
	// Links are the edges drawn in the flow, {source, target}: a drawn edge is always a
	// route, in either direction (replies go back along it), whatever the topology's rule.
	Links [][2]string
	// RateLimitPerMin limits messages through a broker or router (0: DefaultRateLimitPerMin
	// for those topologies; negative: unlimited).
	RateLimitPerMin int
	// Window is the rate limit's period (0: a minute): RateLimitPerMin messages per Window.
	// Tests shorten it rather than wait minutes.
	Window time.Duration
	// Observe, when set, hears of every message the bus holds, releases, drops or lets
	// expire (the engine logs them). It is called with the bus locked: it must not call the
	// bus.
	Observe func(Event)
	// ACL, when non-nil, lists what each sender may send; anything else is refused.
	ACL map[string][]Rule
	// Key, when set, signs every message on Send and verifies it on Receive.
	Key []byte
	// MailboxCap bounds each mailbox (0: 100,000).
	MailboxCap int
	// Now is the clock (tests set it).
	Now func() time.Time
}

// Event kinds Observe hears of.
const (
	Held     = "held"     // the rate limit holds the message; it is delivered when a token comes back
	Released = "released" // a held message was delivered
	Expired  = "expired"  // the message's ttl passed before its recipient read it: not delivered
	Dropped  = "dropped"  // the message will never be delivered (Reason says why)
)

// Event is something that happened to one message: Recipient is set for an expiry (the
// recipient that did not get it), Reason for a drop.
type Event struct {
	Kind      string
	Envelope  *Envelope
	Recipient string
	Reason    string
	// ReleaseAt is when a held message can be delivered at the earliest.
	ReleaseAt time.Time
}

func (b *Bus) observe(ev Event) {
	if b.cfg.Observe != nil {
		b.cfg.Observe(ev)
	}
}

// Bus routes envelopes between the members of one interaction.
type Bus struct {
	cfg     Config
	mu      sync.Mutex
	members map[string]bool
	boxes   map[string][]*Envelope
	held    []*Envelope // rate-limited, released as tokens come back
	retry   []*Envelope // retryable messages that found a mailbox full
	subs    map[string]map[string]bool
	tokens  float64
	last    time.Time
	m       metrics
}

// New makes a bus.
func New(cfg Config) *Bus {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MailboxCap == 0 {
		cfg.MailboxCap = 100_000
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Minute
	}
	if cfg.RateLimitPerMin == 0 && (cfg.Topology == "broker" || cfg.Topology == "router_targeted") {
		cfg.RateLimitPerMin = DefaultRateLimitPerMin
	}
	b := &Bus{cfg: cfg, members: map[string]bool{}, boxes: map[string][]*Envelope{}, subs: map[string]map[string]bool{}, m: newMetrics()}
	for _, id := range cfg.Members {
		b.members[id] = true
	}
	if cfg.Hub != "" {
		b.members[cfg.Hub] = true
	}
	b.tokens = float64(cfg.RateLimitPerMin)
	b.last = cfg.Now()
	return b
}

// Send validates, authorises, routes and delivers (or holds, when rate-limited) e. It fills
// id, timestamp, version and priority when empty. It returns the recipients e reached or
// will reach.
func (b *Bus) Send(e *Envelope) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.cfg.Now()
	if e.ID == "" {
		e.ID = NewID()
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = now
	}
	if e.Version == "" {
		e.Version = Version
	}
	if e.Priority == "" {
		e.Priority = "medium"
	}
	if err := e.Validate(); err != nil {
		b.m.refused(e)
		return nil, err
	}
	to, err := b.route(e)
	if err != nil {
		b.m.refused(e)
		return nil, err
	}
	if err := b.authorise(e, to); err != nil {
		b.m.refused(e)
		return nil, err
	}
	e.To = to
	if err := e.Compress(); err != nil {
		return nil, err
	}
	if b.cfg.Key != nil && e.Signature == "" {
		e.Sign(b.cfg.Key)
	}
	b.m.sent(e)
	if b.cfg.RateLimitPerMin > 0 && !b.toHubOnly(to) {
		b.refill(now)
		if b.tokens < 1 || len(b.held) > 0 {
			b.held = append(b.held, e)
			b.observe(Event{Kind: Held, Envelope: e, ReleaseAt: b.releaseAt(len(b.held) - 1)})
			return to, nil
		}
		b.tokens--
	}
	return to, b.deliver(e)
}

// toHubOnly: a message to the broker or router itself is not one it passes on, so the rate
// limit, which bounds what the hub passes, does not hold it (a publish is counted once, as the
// notification the broker sends for it).
func (b *Bus) toHubOnly(to []string) bool {
	return b.cfg.Hub != "" && len(to) == 1 && to[0] == b.cfg.Hub
}

// Held reports whether the message with this id is still held by the rate limit.
func (b *Bus) Held(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.held {
		if e.ID == id {
			return true
		}
	}
	return false
}

func (b *Bus) refill(now time.Time) {
	rate := float64(b.cfg.RateLimitPerMin) / float64(b.cfg.Window)
	b.tokens += float64(now.Sub(b.last)) * rate
	if max := float64(b.cfg.RateLimitPerMin); b.tokens > max {
		b.tokens = max
	}
	b.last = now
}

func (b *Bus) deliver(e *Envelope) error {
	for _, r := range e.To {
		if len(b.boxes[r]) >= b.cfg.MailboxCap {
			if e.Options != nil && e.Options.Retryable {
				b.retry = append(b.retry, e)
				continue
			}
			b.m.failed(e)
			return fmt.Errorf("%w: %s", ErrMailboxFull, r)
		}
		b.boxes[r] = append(b.boxes[r], e)
	}
	return nil
}

// route resolves recipients and checks the topology allows the route.
func (b *Bus) route(e *Envelope) ([]string, error) {
	if !b.members[e.From] {
		return nil, fmt.Errorf("%w: sender %q is not on this interaction's bus", ErrNoRecipient, e.From)
	}
	var to []string
	seen := map[string]bool{}
	add := func(id string) {
		if id != e.From && !seen[id] {
			seen[id] = true
			to = append(to, id)
		}
	}
	for _, r := range e.To {
		switch {
		case r == "*":
			for _, id := range b.sortedMembers() {
				add(id)
			}
		case strings.HasPrefix(r, "tag:"):
			if b.cfg.Topology != "router_targeted" {
				return nil, fmt.Errorf("%w: target tags need a router_targeted interaction", ErrRoute)
			}
			tag := strings.TrimPrefix(r, "tag:")
			for _, id := range b.sortedMembers() {
				if contains(b.cfg.Tags[id], tag) {
					add(id)
				}
			}
		case strings.HasPrefix(r, "topic:"):
			topic := strings.TrimPrefix(r, "topic:")
			subs := make([]string, 0, len(b.subs[topic]))
			for id := range b.subs[topic] {
				subs = append(subs, id)
			}
			sort.Strings(subs)
			for _, id := range subs {
				add(id)
			}
		default:
			if !b.members[r] {
				return nil, fmt.Errorf("%w: %q", ErrNoRecipient, r)
			}
			add(r)
		}
	}
	if len(to) == 0 && !anyTopic(e.To) {
		return nil, fmt.Errorf("%w: message %s resolves to no recipient", ErrNoRecipient, e.ID)
	}
	hub := b.cfg.Hub
	for _, r := range to {
		if b.linked(e.From, r) {
			continue
		}
		switch b.cfg.Topology {
		case "manager_worker", "broker", "blackboard":
			// Spokes talk through the hub only.
			if hub != "" && e.From != hub && r != hub {
				return nil, fmt.Errorf("%w: in %s, %s may send only to %s, not to %s", ErrRoute, b.cfg.Topology, e.From, hub, r)
			}
		case "pipeline":
			if !b.nextStage(e.From, r) {
				return nil, fmt.Errorf("%w: in a pipeline, %s may send only to the next stage, not to %s", ErrRoute, e.From, r)
			}
		}
	}
	return to, nil
}

func (b *Bus) linked(x, y string) bool {
	for _, l := range b.cfg.Links {
		if (l[0] == x && l[1] == y) || (l[0] == y && l[1] == x) {
			return true
		}
	}
	return false
}

func anyTopic(rs []string) bool {
	for _, r := range rs {
		if strings.HasPrefix(r, "topic:") {
			return true
		}
	}
	return false
}

func (b *Bus) nextStage(from, to string) bool {
	for i, s := range b.cfg.Stages {
		if s == from {
			return i+1 < len(b.cfg.Stages) && b.cfg.Stages[i+1] == to
		}
	}
	return len(b.cfg.Stages) == 0
}

func (b *Bus) sortedMembers() []string {
	ids := make([]string, 0, len(b.members))
	for id := range b.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (b *Bus) authorise(e *Envelope, to []string) error {
	if b.cfg.ACL == nil {
		return nil
	}
	for _, r := range to {
		ok := false
		for _, rule := range b.cfg.ACL[e.From] {
			if (contains(rule.Types, "*") || contains(rule.Types, e.Type)) && (contains(rule.To, "*") || contains(rule.To, r)) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("%w: %s may not send %s to %s", ErrDenied, e.From, e.Type, r)
		}
	}
	return nil
}

// Subscribe adds agent to a topic (publish_subscribe); Unsubscribe removes it.
func (b *Bus) Subscribe(agent, topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs[topic] == nil {
		b.subs[topic] = map[string]bool{}
	}
	b.subs[topic][agent] = true
}

func (b *Bus) Unsubscribe(agent, topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs[topic], agent)
}

// Receive takes agent's deliverable messages, most urgent first, then in send order.
// Expired messages are dropped (and counted); a message whose signature fails is dropped
// and reported in rejected.
func (b *Bus) Receive(agent string) (msgs []*Envelope, rejected []error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.cfg.Now()
	b.release(now)
	box := b.boxes[agent]
	delete(b.boxes, agent)
	for _, e := range box {
		c, err := b.take(agent, e, now)
		if err != nil {
			rejected = append(rejected, err)
		} else if c != nil {
			msgs = append(msgs, c)
		}
	}
	sort.SliceStable(msgs, func(i, j int) bool { return prio(msgs[i].Priority) < prio(msgs[j].Priority) })
	return msgs, rejected
}

// ReceiveNext takes agent's next deliverable message, the most urgent first, then in send
// order: for a reader that acts on one message at a time, so that each message's age is
// checked when its reader gets to it, not when an earlier one was read. Messages found
// expired on the way are dropped (and counted); ok is false when nothing is deliverable now
// (HeldFor says whether more is coming).
func (b *Bus) ReceiveNext(agent string) (msg *Envelope, rejected []error, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.cfg.Now()
	b.release(now)
	for {
		box := b.boxes[agent]
		if len(box) == 0 {
			delete(b.boxes, agent)
			return nil, rejected, false
		}
		i := 0
		for j, e := range box {
			if prio(e.Priority) < prio(box[i].Priority) {
				i = j
			}
		}
		e := box[i]
		b.boxes[agent] = append(box[:i:i], box[i+1:]...)
		c, err := b.take(agent, e, now)
		if err != nil {
			rejected = append(rejected, err)
			continue
		}
		if c != nil {
			return c, rejected, true
		}
	}
}

// take checks one message of agent's mailbox as agent reads it: nil when it expired (observed
// and counted), an error when its signature or payload fails, else the delivered copy.
func (b *Bus) take(agent string, e *Envelope, now time.Time) (*Envelope, error) {
	if e.Expired(now) {
		b.m.expired(e)
		b.observe(Event{Kind: Expired, Envelope: e, Recipient: agent})
		return nil, nil
	}
	if b.cfg.Key != nil {
		if err := e.Verify(b.cfg.Key); err != nil {
			b.m.failed(e)
			return nil, fmt.Errorf("message %s from %s: %w", e.ID, e.From, err)
		}
	}
	c := *e
	if err := c.Decompress(); err != nil {
		return nil, err
	}
	b.m.received(agent, &c, now)
	return &c, nil
}

// Mailbox counts the messages delivered to agent and not yet read.
func (b *Bus) Mailbox(agent string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.boxes[agent])
}

// HeldFor counts the messages the rate limit still holds that will reach agent.
func (b *Bus) HeldFor(agent string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range b.held {
		if contains(e.To, agent) {
			n++
		}
	}
	return n
}

// Pending counts messages not yet received, held by the rate limit included.
func (b *Bus) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.held) + len(b.retry)
	for _, box := range b.boxes {
		n += len(box)
	}
	return n
}

// NextRelease is when the next rate-limited message can be delivered (zero if none held).
func (b *Bus) NextRelease() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.held) == 0 {
		return time.Time{}
	}
	return b.releaseAt(0)
}

// releaseAt is when the held message at position k (0: the next) can be delivered at the
// earliest: it needs a token of its own after the k messages before it have taken theirs,
// and tokens come back one every Window/RateLimitPerMin.
func (b *Bus) releaseAt(k int) time.Time {
	need := float64(k+1) - b.tokens
	if need <= 0 {
		return b.last
	}
	return b.last.Add(time.Duration(need * float64(b.cfg.Window) / float64(b.cfg.RateLimitPerMin)))
}

// Release delivers the held messages the rate limit lets through now and returns how many
// are still held.
func (b *Bus) Release() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.release(b.cfg.Now())
	return len(b.held)
}

// DropHeld gives up the messages still held (the interaction has ended before the rate
// limit let them through): each is observed as dropped with reason, and returned.
func (b *Bus) DropHeld(reason string) []*Envelope {
	b.mu.Lock()
	defer b.mu.Unlock()
	held := b.held
	b.held = nil
	for _, e := range held {
		b.m.failed(e)
		b.observe(Event{Kind: Dropped, Envelope: e, Reason: reason})
	}
	return held
}

func (b *Bus) release(now time.Time) {
	if len(b.retry) > 0 {
		r := b.retry
		b.retry = nil
		for _, e := range r {
			_ = b.deliver(e)
		}
	}
	if b.cfg.RateLimitPerMin <= 0 || len(b.held) == 0 {
		return
	}
	b.refill(now)
	for len(b.held) > 0 && b.tokens >= 1 {
		e := b.held[0]
		b.held = b.held[1:]
		b.tokens--
		if err := b.deliver(e); err != nil {
			b.observe(Event{Kind: Dropped, Envelope: e, Reason: err.Error()})
			continue
		}
		b.observe(Event{Kind: Released, Envelope: e})
	}
}

func prio(p string) int {
	for i, x := range Priorities {
		if x == p {
			return i
		}
	}
	return len(Priorities)
}
