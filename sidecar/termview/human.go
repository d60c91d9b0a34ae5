package termview

import (
	"context"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
)

// Human wraps the Human that asks at the prompt (engine.Terminal) so that a live block is
// off screen while a person answers: the question's line is printed first (the engine logs
// it when the request can take an answer), then the block is erased, the prompt asked, and
// what happened meanwhile printed once the answer is in.
func (v *View) Human(inner engine.Human) engine.Human {
	if !v.o.Live {
		return inner
	}
	return &prompting{v: v, inner: inner}
}

type prompting struct {
	v     *View
	inner engine.Human
}

func (p *prompting) Ask(ctx context.Context, r engine.Request, ready func()) (engine.Response, error) {
	suspended := false
	defer func() {
		if suspended {
			p.v.resume()
		}
	}()
	return p.inner.Ask(ctx, r, func() {
		if ready != nil {
			ready()
		}
		if !suspended {
			suspended = true
			p.v.suspend()
		}
	})
}
