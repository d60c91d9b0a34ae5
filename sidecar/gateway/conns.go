package gateway

import (
	"context"
	"net"
	"sync"
)

// The connections the gateways of this process hold are bounded, well below the files the
// process may open: an agent that opens connections by the thousand and sends nothing (or
// sends slowly) would otherwise take every file the sidecar may open, and no other agent's
// call, nor the run's own files, could be opened. Past the bound, the oldest connection that
// is not carrying a call the gateway forwards is closed to make room; the calls one agent
// may have in flight at once are bounded too (maxInFlight), so its busy connections cannot
// fill the room themselves.

// maxConns is how many connections the process's gateways hold at most (tests lower it).
var maxConns = connLimit()

// connLimit is half the files the process may open, between 256 and 16,384.
func connLimit() int {
	return min(max(openFilesLimit()/2, 256), 16_384)
}

// conns are the connections every gateway of the process holds, oldest first.
var conns = &connSet{}

type connSet struct {
	mu   sync.Mutex
	list []*gwConn
}

// gwConn is a connection to a gateway; busy counts the calls it carries that the gateway
// forwards (it is not closed to make room while it carries one).
type gwConn struct {
	net.Conn
	busy int
	once sync.Once
}

// Close closes the connection and forgets it.
func (c *gwConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { conns.remove(c) })
	return err
}

// add holds c, closing the oldest idle connection when the bound is reached (c itself when
// every other one is busy).
func (s *connSet) add(c *gwConn) {
	s.mu.Lock()
	var victim *gwConn
	if len(s.list) >= maxConns {
		victim = c
		for _, old := range s.list {
			if old.busy == 0 {
				victim = old
				break
			}
		}
	}
	if victim != c {
		s.list = append(s.list, c)
	}
	s.mu.Unlock()
	if victim != nil {
		_ = victim.Close()
	}
}

func (s *connSet) remove(c *gwConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.list {
		if x == c {
			s.list = append(s.list[:i], s.list[i+1:]...)
			return
		}
	}
}

// count is how many connections the process's gateways hold.
func (s *connSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.list)
}

// carrying marks c as carrying a forwarded call until the returned func is called.
func (s *connSet) carrying(c *gwConn) (done func()) {
	if c == nil {
		return func() {}
	}
	s.mu.Lock()
	c.busy++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		c.busy--
		s.mu.Unlock()
	}
}

// boundedListener holds every connection it accepts in conns.
type boundedListener struct{ net.Listener }

func (l boundedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	gc := &gwConn{Conn: c}
	conns.add(gc)
	return gc, nil
}

type connKey struct{}

// withConn puts a request's connection in its context (http.Server.ConnContext).
func withConn(ctx context.Context, c net.Conn) context.Context {
	gc, _ := c.(*gwConn)
	return context.WithValue(ctx, connKey{}, gc)
}

func connOf(ctx context.Context) *gwConn {
	gc, _ := ctx.Value(connKey{}).(*gwConn)
	return gc
}
