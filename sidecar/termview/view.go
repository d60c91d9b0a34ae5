package termview

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// Options of a view beyond its Mode.
type Options struct {
	Mode
	// Now is the clock of the elapsed times (default time.Now); Location the zone of the
	// lines' times (default time.Local). Tests fix both.
	Now      func() time.Time
	Location *time.Location
	// Tick is how often a live block is redrawn while agents run, for their elapsed times
	// (default one second).
	Tick time.Duration
	// Frame is the most often a live view redraws (default 50ms): the events of a burst are
	// drawn together, so the engine, which waits for its sink, never waits for the terminal.
	// Negative: redraw at every event (tests that read the screen after each one).
	Frame time.Duration
	// Width wraps lines at spaces to this many columns when there is no terminal size (a pipe
	// to a terminal: $COLUMNS); 0 leaves them whole.
	Width int
}

// View shows one run. Event is safe for concurrent use (the engine emits from several
// goroutines); Close ends it.
type View struct {
	w io.Writer
	o Options

	mu        sync.Mutex
	r         *run
	notes     map[string]string // agent → the first line of its last reply
	pending   bytes.Buffer      // lines not yet on screen
	scheduled bool              // a redraw is due within a frame
	drawn     int               // lines of the live block now on screen
	shown     []string          // and what they say
	suspended int               // prompts open: the block is off screen, lines wait
	spin      int
	tabled    bool // the agents' final table is printed
	closed    bool
	stop      chan struct{}
	stopped   chan struct{}
}

// New starts a view writing to w.
func New(w io.Writer, o Options) *View {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.Frame == 0 {
		o.Frame = 50 * time.Millisecond
	}
	v := &View{w: w, o: o, r: newRun(), notes: map[string]string{}}
	if o.Live {
		v.stop, v.stopped = make(chan struct{}), make(chan struct{})
		go v.tick()
	}
	return v
}

// tick redraws the live block while agents run, so their clocks move.
func (v *View) tick() {
	defer close(v.stopped)
	t := time.NewTicker(v.o.Tick)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-t.C:
			v.mu.Lock()
			if v.r.running() > 0 {
				v.spin++
				v.update(nil)
			}
			v.mu.Unlock()
		}
	}
}

// Event shows one engine event: it updates the model, prints the lines it is worth (if
// any) and redraws the block.
func (v *View) Event(ev eventlog.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if ev.Event == "step" {
		if n := firstLine(eventlog.Str(ev.Fields["note"])); n != "" {
			v.notes[eventlog.Str(ev.Fields["to"])] = termsafe.Line(n)
		}
	}
	v.r.apply(ev)
	var b bytes.Buffer
	if v.r.finished && !v.tabled {
		// The agents' final states stay on screen, above the run's last line.
		b.Write(v.table())
		v.tabled = true
	}
	for _, l := range v.lines(ev) {
		b.WriteString(wrapText(l+"\n", v.width(), Indent+"  ", ""))
	}
	v.update(b.Bytes())
}

// StoppedByYou tells the view the person stopped the run (Ctrl-C), so stopped turns say so
// rather than showing the Go error the cancellation gave them.
func (v *View) StoppedByYou() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.r.byYou = true
}

// Printf prints a line of the caller's (the command's closing hints) above the block.
func (v *View) Printf(format string, a ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	line := fmt.Sprintf(format, a...)
	cont := ""
	if isCommand(line) {
		cont = " \\"
	}
	v.update([]byte(wrapText(line+"\n", v.width(), Indent+"  ", cont)))
}

// width is the columns lines are wrapped to: the terminal's, else Options.Width.
func (v *View) width() int {
	if v.o.Size != nil {
		if c, _ := v.o.Size(); c > 0 {
			return c
		}
	}
	return v.o.Width
}

// Close stops the clock, draws what is still pending, and leaves the agents' final states
// on screen when the run ended without a run_finished event (a run refused or torn down
// early).
func (v *View) Close() {
	if v.stop != nil {
		close(v.stop)
		<-v.stopped
		v.stop = nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return
	}
	if !v.tabled && len(v.r.agents) > 0 {
		v.pending.Write(v.table())
		v.tabled = true
	}
	v.r.finished = true
	v.suspended = 0
	v.render()
	v.closed = true
}

// suspend takes the block off screen while a person answers a prompt: what the engine
// reports meanwhile waits, rather than being printed through what they type.
func (v *View) suspend() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.render() // the question's own line first
	v.erase()
	v.suspended++
}

func (v *View) resume() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.suspended > 0 {
		v.suspended--
		v.render()
	}
}

// update adds lines: written at once as plain lines, or drawn with the live block within a
// frame.
func (v *View) update(lines []byte) {
	if v.closed || !v.o.Live {
		v.write(lines)
		return
	}
	v.pending.Write(lines)
	switch {
	case v.o.Frame < 0:
		v.render()
	case !v.scheduled:
		v.scheduled = true
		time.AfterFunc(v.o.Frame, func() {
			v.mu.Lock()
			defer v.mu.Unlock()
			v.scheduled = false
			v.render()
		})
	}
}

// render draws the pending lines and, unless the run is over, the block under them,
// replacing the block on screen.
func (v *View) render() {
	if v.closed || v.suspended > 0 {
		return
	}
	var block []string
	if !v.r.finished {
		block = v.block()
	}
	if v.pending.Len() == 0 && slices.Equal(block, v.shown) {
		return // nothing new on screen: most events only feed the model
	}
	var b bytes.Buffer
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\r\x1b[J", v.drawn)
	}
	b.Write(v.pending.Bytes())
	v.pending.Reset()
	for _, l := range block {
		b.WriteString(l)
		b.WriteString("\x1b[K\n")
	}
	v.drawn, v.shown = len(block), block
	v.write(b.Bytes())
}

// erase takes the live block off screen.
func (v *View) erase() {
	if v.drawn > 0 {
		v.write(fmt.Appendf(nil, "\x1b[%dA\r\x1b[J", v.drawn))
		v.drawn, v.shown = 0, nil
	}
}

func (v *View) write(b []byte) {
	if len(b) > 0 {
		_, _ = v.w.Write(b)
	}
}

// size is the terminal's columns and rows, with defaults when unknown.
func (v *View) size() (int, int) {
	cols, rows := 0, 0
	if v.o.Size != nil {
		cols, rows = v.o.Size()
	}
	if cols <= 0 {
		cols = 100
	}
	if rows <= 0 {
		rows = 24
	}
	return cols, rows
}

// --- colour -----------------------------------------------------------------------------

type style string

const (
	plain  style = ""
	bold   style = "1"
	dim    style = "2"
	red    style = "31"
	green  style = "32"
	yellow style = "33"
	cyan   style = "36"
)

func (v *View) paint(s style, text string) string {
	if !v.o.Color || s == plain || text == "" {
		return text
	}
	return "\x1b[" + string(s) + "m" + text + "\x1b[0m"
}

// Indent is the width of a line's time stamp and the space after it: lines that continue an
// event, or the command's closing hints, start with it.
const Indent = "         "

// stamp starts a line: the event's time of day.
func (v *View) stamp(ev eventlog.Event) string {
	return v.paint(dim, ev.Time().In(v.o.Location).Format("15:04:05")) + " "
}

// multiline indents the lines after the first of a message under its first.
func multiline(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+Indent+"  ")
}
