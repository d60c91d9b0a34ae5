// Package bus is the run engine's message bus: envelopes as agent-message-envelope.md
// defines them, routing by topology, rate limits, TTL expiry, retention, optional HMAC
// signing with a per-run key, per-agent access control and the run's message metrics.
// It is in-memory and knows nothing of processes: the engine posts what agents say and
// takes what they are to read.
package bus

import (
	"bytes"
	"compress/gzip"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/jsonenc"
)

// Version is the envelope protocol version this bus speaks. A message of another major
// version is refused.
const Version = "1.0.0"

// Priorities, most urgent first.
var Priorities = []string{"critical", "high", "medium", "low"}

// Types are the message types of the envelope document, plus the engine's own
// conversation types (prompt, reply, verdict, vote, bid, offer…) used by the patterns.
var Types = []string{
	"task_assignment", "task_status", "task_completion", "task_blocked",
	"review_request", "review_completed", "review_feedback",
	"information", "notification", "alert", "question",
	"collaboration_request", "resource_ready", "dependency_update",
	"error", "batch",
	// pattern conversation
	"prompt", "reply", "verdict", "vote", "cfp", "propose", "refuse", "accept", "reject",
	"inform_done", "failure", "offer", "counteroffer", "post", "publish", "query",
	// the edge messages of the pattern templates (patterns/P*.json)
	"accept-proposal", "accepted_fix", "ack", "answer", "argument", "attack", "ballot",
	"check_report", "code", "conclusion", "critique", "daily_summary", "decision", "defense",
	"delivery", "error_report", "final_answer", "forward", "handoff", "inform-done",
	"instruction", "memory_update", "notify", "observation", "plan", "prd", "private_log",
	"read", "reflection", "register", "reject-proposal", "request", "response", "revise",
	"revised_solution", "sample", "search", "solution", "subscribe", "subtask",
	"subtree_report", "system_design", "targeted_message", "task_list", "test_report", "tie",
	"trace", "unsubscribe",
}

// Envelope is one message between agents.
type Envelope struct {
	ID        string     `json:"id"`
	Timestamp time.Time  `json:"timestamp"`
	Version   string     `json:"version"`
	From      string     `json:"from"`
	To        Recipients `json:"to"`
	Type      string     `json:"type"`
	Priority  string     `json:"priority"`
	Payload   any        `json:"payload"`
	Context   Context    `json:"context"`
	Options   *Options   `json:"options,omitempty"`
	Signature string     `json:"signature,omitempty"`
}

// Context links a message into a conversation. Issue is an optional issue reference
// (the envelope document's Jira issue, generalised; no tracker is called).
type Context struct {
	Issue           string `json:"issue,omitempty"`
	ParentMessageID string `json:"parentMessageId,omitempty"`
	ThreadID        string `json:"threadId,omitempty"`
	Environment     string `json:"environment,omitempty"`
	InteractionID   string `json:"interactionId,omitempty"`
	EdgeID          string `json:"edgeId,omitempty"`
}

// Options of delivery.
type Options struct {
	RequiresResponse bool       `json:"requiresResponse,omitempty"`
	ResponseDeadline *time.Time `json:"responseDeadline,omitempty"`
	Retryable        bool       `json:"retryable,omitempty"`
	TTL              int        `json:"ttl,omitempty"` // seconds
}

// Recipients is one recipient or many; it is written as a string when there is one.
type Recipients []string

func (r Recipients) MarshalJSON() ([]byte, error) {
	if len(r) == 1 {
		return json.Marshal(r[0])
	}
	return json.Marshal([]string(r))
}

func (r *Recipients) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*r = Recipients{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("to: a recipient or a list of recipients: %w", err)
	}
	*r = many
	return nil
}

// Expired reports whether the message's TTL has passed at now.
func (e *Envelope) Expired(now time.Time) bool {
	return e.Options != nil && e.Options.TTL > 0 && now.Sub(e.Timestamp) > time.Duration(e.Options.TTL)*time.Second
}

// Validate checks the fields the envelope document requires.
func (e *Envelope) Validate() error {
	switch {
	case e.ID == "":
		return errors.New("envelope: id is required")
	case e.From == "":
		return errors.New("envelope: from is required")
	case len(e.To) == 0:
		return errors.New("envelope: to is required")
	case e.Type == "":
		return errors.New("envelope: type is required")
	}
	if !contains(Types, e.Type) {
		return fmt.Errorf("envelope: unknown type %q", e.Type)
	}
	if e.Priority != "" && !contains(Priorities, e.Priority) {
		return fmt.Errorf("envelope: priority %q is not one of %s", e.Priority, strings.Join(Priorities, ", "))
	}
	if major(e.Version) != major(Version) {
		return fmt.Errorf("envelope: protocol version %q is not compatible with %s (major versions differ)", e.Version, Version)
	}
	return nil
}

func major(v string) string {
	if i := strings.IndexByte(v, '.'); i >= 0 {
		return v[:i]
	}
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// NewID returns a random message id, "msg_" and 16 hex digits.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

// --- signing -------------------------------------------------------------------------------

// NewKey returns a random per-run signing key. It lives in memory only.
func NewKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

// canonical is the signed content: the envelope without its signature, as json.Marshal
// writes it. It is written by hand (every message is signed and verified, and reflection
// made that the bus's main cost); a timestamp json.Marshal would refuse goes through it.
func (e *Envelope) canonical() []byte {
	if !jsonTime(e.Timestamp) || e.Options != nil && e.Options.ResponseDeadline != nil && !jsonTime(*e.Options.ResponseDeadline) {
		c := *e
		c.Signature = ""
		b, _ := json.Marshal(&c)
		return b
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"id":`...)
	b = jsonenc.AppendString(b, e.ID)
	b = append(b, `,"timestamp":"`...)
	b = e.Timestamp.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","version":`...)
	b = jsonenc.AppendString(b, e.Version)
	b = append(b, `,"from":`...)
	b = jsonenc.AppendString(b, e.From)
	b = append(b, `,"to":`...)
	if len(e.To) == 1 {
		b = jsonenc.AppendString(b, e.To[0])
	} else {
		b, _ = jsonenc.AppendValue(b, []string(e.To))
	}
	b = append(b, `,"type":`...)
	b = jsonenc.AppendString(b, e.Type)
	b = append(b, `,"priority":`...)
	b = jsonenc.AppendString(b, e.Priority)
	b = append(b, `,"payload":`...)
	b, err := jsonenc.AppendValue(b, e.Payload)
	if err != nil {
		return nil // as json.Marshal (Send refuses such a payload before signing: Compress)
	}
	b = append(b, `,"context":{`...)
	first := true
	for _, kv := range [...][2]string{{"issue", e.Context.Issue}, {"parentMessageId", e.Context.ParentMessageID}, {"threadId", e.Context.ThreadID},
		{"environment", e.Context.Environment}, {"interactionId", e.Context.InteractionID}, {"edgeId", e.Context.EdgeID}} {
		if kv[1] != "" {
			b = field(b, &first, kv[0])
			b = jsonenc.AppendString(b, kv[1])
		}
	}
	b = append(b, '}')
	if o := e.Options; o != nil {
		b = append(b, `,"options":{`...)
		first = true
		if o.RequiresResponse {
			b = append(field(b, &first, "requiresResponse"), "true"...)
		}
		if o.ResponseDeadline != nil {
			b = append(field(b, &first, "responseDeadline"), '"')
			b = append(o.ResponseDeadline.AppendFormat(b, time.RFC3339Nano), '"')
		}
		if o.Retryable {
			b = append(field(b, &first, "retryable"), "true"...)
		}
		if o.TTL != 0 {
			b = strconv.AppendInt(field(b, &first, "ttl"), int64(o.TTL), 10)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// field starts an object member "key": (after a comma unless it is the first).
func field(b []byte, first *bool, key string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// jsonTime: t is written by time.Time's MarshalJSON as AppendFormat(RFC3339Nano) writes it
// (it refuses years outside 0–9999 and offsets of a day or more).
func jsonTime(t time.Time) bool {
	_, off := t.Zone()
	return t.Year() >= 0 && t.Year() <= 9999 && off > -24*3600 && off < 24*3600
}

// Sign sets the HMAC-SHA256 signature of e under key.
func (e *Envelope) Sign(key []byte) {
	m := hmac.New(sha256.New, key)
	m.Write(e.canonical())
	e.Signature = "hmac-sha256:" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Verify checks e's signature under key.
func (e *Envelope) Verify(key []byte) error {
	sig, ok := strings.CutPrefix(e.Signature, "hmac-sha256:")
	if !ok {
		return errors.New("envelope: missing or unknown signature")
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return errors.New("envelope: malformed signature")
	}
	m := hmac.New(sha256.New, key)
	m.Write(e.canonical())
	if !hmac.Equal(got, m.Sum(nil)) {
		return errors.New("envelope: signature does not match; the message was altered")
	}
	return nil
}

// --- payload compression and batching ------------------------------------------------------

// CompressThreshold is the payload size (JSON bytes) above which Compress gzips it.
const CompressThreshold = 64 << 10

// Compressed is the envelope document's compressed payload form.
type Compressed struct {
	Compressed bool   `json:"compressed"`
	Encoding   string `json:"encoding"`
	Data       string `json:"data"`
}

// Compress replaces a large payload by its gzip form; small payloads are left alone.
func (e *Envelope) Compress() error {
	raw, err := jsonenc.AppendValue(nil, e.Payload)
	if err != nil {
		return err
	}
	if len(raw) <= CompressThreshold {
		return nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return err
	}
	e.Payload = Compressed{Compressed: true, Encoding: "gzip", Data: base64.StdEncoding.EncodeToString(buf.Bytes())}
	return nil
}

// Decompress restores a payload compressed by Compress (after a JSON round trip too).
func (e *Envelope) Decompress() error {
	var c Compressed
	switch p := e.Payload.(type) {
	case Compressed:
		c = p
	case map[string]any:
		if yes, _ := p["compressed"].(bool); !yes {
			return nil // most payloads: no JSON round trip to find that out
		}
		b, _ := json.Marshal(p)
		if json.Unmarshal(b, &c) != nil || !c.Compressed {
			return nil
		}
	default:
		return nil
	}
	if c.Encoding != "gzip" {
		return fmt.Errorf("envelope: unknown payload encoding %q", c.Encoding)
	}
	z, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		return fmt.Errorf("envelope: compressed payload: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return fmt.Errorf("envelope: compressed payload: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return fmt.Errorf("envelope: compressed payload: %w", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("envelope: compressed payload: %w", err)
	}
	e.Payload = v
	return nil
}

// Batch wraps small messages to one recipient into one batch envelope.
func Batch(from string, to Recipients, msgs []*Envelope) *Envelope {
	return &Envelope{ID: NewID(), Version: Version, From: from, To: to, Type: "batch", Priority: "medium",
		Payload: map[string]any{"messages": msgs}}
}
