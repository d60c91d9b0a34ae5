package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// What reaches the agent of a provider's answer: its status, headers and body, with the
// real key nowhere in them (a provider, or a proxy the flow names as upstream, may repeat
// the key it was sent in an error's text or a header), no trailers, and never a redirect
// (the agent would follow it elsewhere with its conversation; the model endpoints do not
// redirect).

// redirected is a provider's answer that sends the caller elsewhere.
type redirected struct {
	status int
	host   string
}

func (e redirected) Error() string {
	return fmt.Sprintf("the provider answered %d, a redirect to %s, which the gateway does not follow", e.status, quoteShort(e.host))
}

// answer makes a provider's answer fit to pass to the agent, then meters a model call's.
func (g *Gateway) answer(resp *http.Response) error {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified {
		host := "(no location)"
		if u, err := resp.Location(); err == nil {
			host = u.Host
		}
		resp.Body.Close()
		return redirected{status: resp.StatusCode, host: host}
	}
	resp.Trailer = nil
	c := resp.Request.Context().Value(ctxKey{}).(*call)
	if key := c.caller.Keys[c.e.provider]; len(key) >= MinSecretLen {
		redactHeader(resp.Header, key)
		resp.Body = &redactor{body: resp.Body, key: []byte(key)}
	}
	return g.meter(resp)
}

// MinSecretLen is the shortest key masked in a provider's answers (and value redacted from a
// run's logs). A shorter one is a placeholder a local model or proxy ignores (x, dummy):
// masking it would change every answer where those letters occur, and break its JSON.
const MinSecretLen = 6

// redactHeader masks key wherever it is in h's values.
func redactHeader(h http.Header, key string) {
	k := []byte(key)
	for name, vs := range h {
		for i, v := range vs {
			if b := []byte(v); bytes.Contains(b, k) {
				h[name][i] = string(mask(b, k))
			}
		}
	}
}

// mask replaces every whole key in b by as many '*' (so a length the answer states stays
// true), in place.
func mask(b, key []byte) []byte {
	for i := bytes.Index(b, key); i >= 0; i = bytes.Index(b, key) {
		for j := range key {
			b[i+j] = '*'
		}
	}
	return b
}

// redactor passes a body on with every occurrence of key masked, also one split across
// reads: it holds back only a tail of what it read that could be the key's beginning, so a
// stream's events (which end in a blank line) pass at once.
type redactor struct {
	body  io.ReadCloser
	key   []byte
	buf   []byte // what was read, the held tail first
	held  []byte // a tail that may begin the key, not passed on yet
	ready []byte // masked, to pass on
	err   error
}

func (r *redactor) Read(p []byte) (int, error) {
	for len(r.ready) == 0 && r.err == nil {
		if r.buf == nil {
			r.buf = make([]byte, 0, 32<<10)
		}
		r.buf = append(r.buf[:0], r.held...)
		n, err := r.body.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf, r.err = mask(r.buf[:len(r.buf)+n], r.key), err
		keep := 0
		if err == nil {
			keep = keyStart(r.buf, r.key)
		}
		cut := len(r.buf) - keep
		r.held, r.ready = append(r.held[:0], r.buf[cut:]...), r.buf[:cut]
	}
	n := copy(p, r.ready)
	r.ready = r.ready[n:]
	if len(r.ready) == 0 {
		return n, r.err
	}
	return n, nil
}

func (r *redactor) Close() error { return r.body.Close() }

// keyStart is the length of the longest tail of b that is a beginning of key (shorter than
// key: a whole key was masked already).
func keyStart(b, key []byte) int {
	for i := max(len(b)-len(key)+1, 0); i < len(b); i++ {
		if b[i] == key[0] && bytes.HasPrefix(key, b[i:]) {
			return len(b) - i
		}
	}
	return 0
}
