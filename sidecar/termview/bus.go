package termview

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// busLine is the line of a message the bus held back, let through late, let expire or
// dropped: the rate limit and ttl at work, so a slow broker or a missing message is
// explained where the person looks.
func busLine(ev eventlog.Event) (s style, mark, text string) {
	f := ev.Fields
	msg := fmt.Sprintf("message %s from %s to %s", eventlog.Str(f["type"]), eventlog.Str(f["from"]), strings.Join(eventlog.Strs(f["to"]), ", "))
	switch ev.Event {
	case "message_held":
		return dim, "·", msg + " held by the rate limit"
	case "message_released":
		return dim, "·", msg + " released by the rate limit"
	case "message_expired":
		return yellow, "!", fmt.Sprintf("message %s from %s to %s expired (ttl %ss) before it was read", eventlog.Str(f["type"]), eventlog.Str(f["from"]), eventlog.Str(f["to"]), eventlog.Str(f["ttlS"]))
	default: // message_dropped
		return red, "✗", msg + " dropped: " + eventlog.Str(f["reason"])
	}
}
