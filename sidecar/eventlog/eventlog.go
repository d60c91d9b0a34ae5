// Package eventlog writes and reads the JSONL event log of spec §9:
// .agentcanvas/logs/<flow>/<YYYY-MM-DD>.jsonl, one event a line
// {ts, flow, runId, interactionId, edgeId, event, …}. The run engine, the proposal workflow and
// the server all write through it; appends from concurrent goroutines never interleave, and
// readers tolerate a torn last line (a writer killed mid-line).
package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/jsonenc"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"

	"github.com/agentcanvas/agentcanvas/sidecar/statedir"
)

// LogsDir is the workspace-relative folder holding every flow's logs.
const LogsDir = ".agentcanvas/logs"

// Event is one log line. TS is Unix epoch milliseconds (UTC); zero means "now" on Append.
// Fields holds every other key and is written at the top level of the line (spec §9.1 puts
// "step", "from", "to", "reason", "data" … beside "event"). Keys in Fields that collide with
// the common fields are ignored.
type Event struct {
	TS            int64
	Flow          string
	RunID         string
	InteractionID string
	EdgeID        string
	Event         string
	Fields        map[string]any
}

var commonKeys = map[string]bool{"ts": true, "flow": true, "runId": true, "interactionId": true, "edgeId": true, "event": true}

// MarshalJSON writes the common fields first, then Fields sorted by key.
func (e Event) MarshalJSON() ([]byte, error) { return e.appendJSON(nil) }

// appendJSON appends the event as MarshalJSON writes it (one line, no newline).
func (e Event) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"ts":`...)
	b = strconv.AppendInt(b, e.TS, 10)
	for _, kv := range [...][2]string{{`,"flow":`, e.Flow}, {`,"runId":`, e.RunID}, {`,"interactionId":`, e.InteractionID}, {`,"edgeId":`, e.EdgeID}, {`,"event":`, e.Event}} {
		b = append(b, kv[0]...)
		b = jsonenc.AppendString(b, kv[1])
	}
	var small [16]string
	keys := small[:0]
	for k := range e.Fields {
		if !commonKeys[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = append(b, ',')
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = jsonenc.AppendValue(b, e.Fields[k]); err != nil {
			return nil, fmt.Errorf("eventlog: field %q: %w", k, err)
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the common fields and keeps the rest in Fields (as json.RawMessage).
func (e *Event) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*e = Event{}
	str := func(k string, dst *string) error {
		if v, ok := m[k]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return fmt.Errorf("field %q: %w", k, err)
			}
		}
		return nil
	}
	if v, ok := m["ts"]; ok {
		if err := json.Unmarshal(v, &e.TS); err != nil {
			return fmt.Errorf("field \"ts\": %w", err)
		}
	}
	for k, dst := range map[string]*string{"flow": &e.Flow, "runId": &e.RunID, "interactionId": &e.InteractionID, "edgeId": &e.EdgeID, "event": &e.Event} {
		if err := str(k, dst); err != nil {
			return err
		}
	}
	for k, v := range m {
		if !commonKeys[k] {
			if e.Fields == nil {
				e.Fields = map[string]any{}
			}
			e.Fields[k] = v
		}
	}
	return nil
}

// Time returns TS as a time.Time.
func (e Event) Time() time.Time { return time.UnixMilli(e.TS).UTC() }

// Log appends events of one flow. It is safe for concurrent use; each event (or, for a
// buffered log, each batch of whole lines) is written with a single write(2) on an O_APPEND
// file, so lines from several processes do not interleave either.
type Log struct {
	root     *os.Root
	flow     string
	dir      string // workspace-relative
	now      func() time.Time
	buffered bool

	mu      sync.Mutex
	day     string
	file    *os.File
	buf     []byte // lines not yet written (a buffered log), or the line being written
	through int    // WriteThrough calls not yet done: write each line at once
}

// flushAt is the size at which a buffered log writes its lines without waiting for Flush.
const flushAt = 64 << 10

// CheckFlowName refuses flow names that cannot be one folder name under logs/.
func CheckFlowName(flow string) error {
	if flow == "" {
		return errors.New("eventlog: empty flow name")
	}
	if strings.Contains(flow, "/") {
		return fmt.Errorf("eventlog: flow name %q contains '/'", flow)
	}
	if _, err := safepath.Clean(flow, safepath.Rules{}); err != nil {
		return fmt.Errorf("eventlog: flow name: %w", err)
	}
	return nil
}

// Open returns the log of one flow in a workspace. Files are created on the first Append.
func Open(workspaceRoot, flow string) (*Log, error) {
	if err := CheckFlowName(flow); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(workspaceRoot)
	if err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	return &Log{root: root, flow: flow, dir: path.Join(LogsDir, flow), now: time.Now}, nil
}

// OpenBuffered is Open for a writer that logs events in bursts (the run engine, several
// events between two agent turns): Append keeps lines in memory, and Flush (or Close, or
// 64 KiB of lines) writes them with one write(2). The writer decides where its log must be
// on disk and flushes there; readers never see a partial line from it.
func OpenBuffered(workspaceRoot, flow string) (*Log, error) {
	l, err := Open(workspaceRoot, flow)
	if l != nil {
		l.buffered = true
	}
	return l, err
}

// Flow is the flow this log writes.
func (l *Log) Flow() string { return l.flow }

// Append writes one event as one line to the file of its day (UTC). Empty TS means now; empty
// Flow means the log's flow.
func (l *Log) Append(ev Event) error {
	if ev.TS == 0 {
		ev.TS = l.now().UnixMilli()
	}
	if ev.Flow == "" {
		ev.Flow = l.flow
	}
	if ev.Event == "" {
		return errors.New("eventlog: event has no name")
	}
	day := ev.Time().Format("2006-01-02")

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil || l.day != day {
		if err := l.flush(); err != nil {
			return err
		}
		if l.file != nil {
			l.file.Close()
			l.file = nil
		}
		if err := statedir.Ensure(l.root); err != nil { // a new .agentcanvas/ stays out of git
			return fmt.Errorf("eventlog: %w", err)
		}
		if err := l.root.MkdirAll(l.dir, 0o755); err != nil {
			return fmt.Errorf("eventlog: %w", err)
		}
		f, err := l.root.OpenFile(path.Join(l.dir, day+".jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("eventlog: %w", err)
		}
		l.file, l.day = f, day
	}
	n := len(l.buf)
	b, err := ev.appendJSON(l.buf)
	if err != nil {
		l.buf = l.buf[:n]
		return err
	}
	l.buf = append(b, '\n')
	if l.buffered && l.through == 0 && len(l.buf) < flushAt {
		return nil
	}
	return l.flush()
}

// WriteThrough writes what a buffered log holds and then each line at once, until done is
// called (calls nest): while another writer appends to the same file (proposal.Create logs
// its own events), lines stay in the order they were logged.
func (l *Log) WriteThrough() (done func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.through++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.through--
			l.mu.Unlock()
		})
	}, l.flush()
}

// Flush writes a buffered log's lines (nothing to do for an unbuffered one).
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flush()
}

// flush writes l.buf to the open file; the lines are dropped even when the write fails, so
// a full disk cannot make the buffer grow without bound, and a write cut short is cut off the
// file again (when nothing was appended after it), so the next line does not join a torn one.
// Called with l.mu held.
func (l *Log) flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	var size int64 = -1
	if fi, err := l.file.Stat(); err == nil {
		size = fi.Size()
	}
	n, err := l.file.Write(l.buf)
	if err != nil && n > 0 && size >= 0 {
		if fi, serr := l.file.Stat(); serr == nil && fi.Size() == size+int64(n) {
			l.file.Truncate(size)
		}
	}
	if cap(l.buf) > 4*flushAt {
		l.buf = nil // one huge line: do not keep its memory
	} else {
		l.buf = l.buf[:0]
	}
	if err != nil {
		return fmt.Errorf("eventlog: %w", err)
	}
	return nil
}

// Close writes what is buffered and releases the open file and the workspace handle.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.flush()
	if l.file != nil {
		l.file.Close()
		l.file = nil
	}
	return errors.Join(err, l.root.Close())
}

// BadLinesError names the lines Decode skipped: lines that do not parse (a write cut short
// by a full disk or a power cut, or a line appended to such a one). Every other line's event
// is returned with it.
type BadLinesError struct {
	File  string // set by Read
	Lines []int
	First error
}

func (e *BadLinesError) Error() string {
	what := fmt.Sprintf("line %d", e.Lines[0])
	if len(e.Lines) > 1 {
		what = fmt.Sprintf("%d lines (the first, line %d)", len(e.Lines), e.Lines[0])
	}
	s := fmt.Sprintf("skipped %s that did not parse: %v", what, e.First)
	if e.File != "" {
		s = e.File + ": " + s
	}
	return s
}

// Decode reads events from r. A last line without a newline that does not parse is a write
// in progress (or cut by a crash) and is left out; any other line that does not parse is
// skipped, and the reading goes on past it: the events come with a *BadLinesError.
func Decode(r io.Reader) ([]Event, error) {
	br := bufio.NewReader(r)
	var out []Event
	var bad *BadLinesError
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			var ev Event
			if uerr := json.Unmarshal(trimmed, &ev); uerr == nil {
				out = append(out, ev)
			} else if line[len(line)-1] == '\n' {
				if bad == nil {
					bad = &BadLinesError{First: uerr}
				}
				bad.Lines = append(bad.Lines, n)
				if ev, ok := salvage(trimmed); ok {
					out = append(out, ev) // a whole event appended to a torn one
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, err
		}
	}
	if bad != nil {
		return out, bad
	}
	return out, nil
}

// salvage reads the last whole event of a line that does not parse.
func salvage(line []byte) (Event, bool) {
	var ev Event
	i := bytes.LastIndex(line, []byte(`{"ts":`))
	return ev, i > 0 && json.Unmarshal(line[i:], &ev) == nil && ev.Event != ""
}

// Days lists the days (YYYY-MM-DD) that have a log file for flow, oldest first.
func Days(workspaceRoot, flow string) ([]string, error) {
	if err := CheckFlowName(flow); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(workspaceRoot)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	ents, err := fs.ReadDir(root.FS(), path.Join(LogsDir, flow))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var days []string
	for _, e := range ents {
		if d, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && e.Type().IsRegular() {
			if _, perr := time.Parse("2006-01-02", d); perr == nil {
				days = append(days, d)
			}
		}
	}
	sort.Strings(days)
	return days, nil
}

// Read returns the events of one flow on one day (YYYY-MM-DD); a missing file is no events.
func Read(workspaceRoot, flow, day string) ([]Event, error) {
	if err := CheckFlowName(flow); err != nil {
		return nil, err
	}
	if _, err := time.Parse("2006-01-02", day); err != nil {
		return nil, fmt.Errorf("eventlog: day %q is not YYYY-MM-DD", day)
	}
	root, err := os.OpenRoot(workspaceRoot)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	name := path.Join(LogsDir, flow, day+".jsonl")
	f, err := root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	evs, err := Decode(f)
	var bad *BadLinesError
	if errors.As(err, &bad) {
		bad.File = name
		return evs, bad
	}
	if err != nil {
		return evs, fmt.Errorf("%s: %w", name, err)
	}
	return evs, nil
}

// ReadAll returns every event of a flow, oldest day first. Lines skipped in any day's file
// are named in the error (*BadLinesError, joined), which comes with every other event.
func ReadAll(workspaceRoot, flow string) ([]Event, error) {
	days, err := Days(workspaceRoot, flow)
	if err != nil {
		return nil, err
	}
	var all []Event
	var skipped []error
	for _, d := range days {
		evs, err := Read(workspaceRoot, flow, d)
		all = append(all, evs...)
		var bad *BadLinesError
		if errors.As(err, &bad) {
			skipped = append(skipped, bad)
		} else if err != nil {
			return all, err
		}
	}
	return all, errors.Join(skipped...)
}

// Skipped says whether err only names lines the reading skipped (the events came with it).
func Skipped(err error) bool {
	var bad *BadLinesError
	if !errors.As(err, &bad) {
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !errors.As(e, &bad) {
				return false
			}
		}
	}
	return true
}
