package agentproto

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ReplyForm says which standard structure a reply follows.
type ReplyForm string

const (
	// FormMessage is the standard message format (docs/agent-protocol.md, Standard message and response sections):
	// Intent, Inputs, Plan, Actions, Open Questions.
	FormMessage ReplyForm = "message"
	// FormResponse is the orchestrator ↔ worker response format (same section): Intent,
	// Assumptions/Inputs, Plan, Actions/Artifacts, Risks/Safety Notes, Next Steps or DONE.
	FormResponse ReplyForm = "response"
)

// Section names, as docs/agent-protocol.md spells them ("Standard message and response
// sections"; the short forms are the request's).
const (
	SectionIntent        = "Intent"
	SectionInputs        = "Assumptions/Inputs"
	SectionPlan          = "Plan"
	SectionActions       = "Actions/Artifacts"
	SectionOpenQuestions = "Open Questions"
	SectionRisks         = "Risks/Safety Notes"
	SectionNext          = "Next Steps or DONE"
)

// Section is one section of a reply as written.
type Section struct {
	Name  string   // one of the Section* constants
	Line  int      // 1-based line of its heading
	Items []string // its bullet or numbered items, or its lines of text
}

// Reply is an agent's reply read as the standard message or response format.
type Reply struct {
	Form          ReplyForm
	Intent        string
	Inputs        []string // Inputs (message) or Assumptions/Inputs (response)
	Plan          []string
	Actions       []string // Actions (message) or Actions/Artifacts (response)
	OpenQuestions []string
	Risks         []string
	NextSteps     []string
	Done          bool      // the reply declares DONE
	Sections      []Section // every section found, in order
	Blocks        []Block   // protocol blocks in the reply (HANDOFF, questions, …)
}

// sectionAliases maps a normalised heading to its section.
var sectionAliases = map[string]string{
	"intent": SectionIntent, "goal": SectionIntent,
	"inputs": SectionInputs, "assumptions": SectionInputs, "assumptions/inputs": SectionInputs,
	"assumptions and inputs": SectionInputs, "assumptions & inputs": SectionInputs,
	"plan":    SectionPlan,
	"actions": SectionActions, "artifacts": SectionActions, "actions/artifacts": SectionActions,
	"actions and artifacts": SectionActions, "actions & artifacts": SectionActions,
	"open questions": SectionOpenQuestions, "questions": SectionOpenQuestions,
	"risks": SectionRisks, "safety notes": SectionRisks, "risks/safety notes": SectionRisks,
	"risks and safety notes": SectionRisks, "risks & safety notes": SectionRisks,
	"next steps or done": SectionNext, "next steps": SectionNext, "next steps/done": SectionNext,
	"next": SectionNext, "done": SectionNext,
}

var (
	headingNumberRE = regexp.MustCompile(`^\d+[.)]\s+`)
	listMarkerRE    = regexp.MustCompile(`^(?:[-*+•]|\d+[.)])\s+(?:\[[ xX]\]\s+)?`)
)

// heading recognises a section heading: "## Plan", "3. Plan", "**Plan**",
// "Plan:", "1. Intent — add a cache" (text after ':' or a dash is the first
// content). A bare line is a heading only when it is exactly a section name.
func heading(line string) (name, rest string, ok bool) {
	t := strings.TrimSpace(line)
	marked := false
	if strings.HasPrefix(t, "#") {
		t, marked = strings.TrimSpace(strings.TrimLeft(t, "#")), true
	}
	if m := headingNumberRE.FindString(t); m != "" {
		t, marked = t[len(m):], true
	}
	for _, b := range []string{"**", "__"} {
		if strings.HasPrefix(t, b) {
			if end := strings.Index(t[2:], b); end >= 0 {
				inner := strings.TrimSpace(t[2 : 2+end])
				t, marked = inner+t[2+end+2:], true
			}
		}
	}
	head, tail := t, ""
	for _, sep := range []string{":", " — ", " – ", " - "} {
		if i := strings.Index(t, sep); i > 0 {
			head, tail = t[:i], t[i+len(sep):]
			if sep == ":" {
				marked = true
			}
			break
		}
	}
	head = strings.TrimSuffix(strings.TrimSpace(head), ":")
	key := strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(head, " / ", "/")), " "))
	name, ok = sectionAliases[key]
	if !ok || (!marked && tail != "") {
		return "", "", false
	}
	return name, strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(tail), ":")), true
}

// ParseReply reads a reply's standard sections (docs/agent-protocol.md, Standard message and
// response sections). Lines inside protocol blocks (a HANDOFF, say) are not section text;
// the blocks are returned in Reply.Blocks. The error, when not nil, joins every
// way the reply departs from the format, each naming its section: a missing
// section, an Intent longer than one line, a Plan outside 3–7 steps, more than
// 3 open questions. The Reply is filled in as far as it could be read either way.
func ParseReply(text string) (Reply, error) {
	var r Reply
	sr := sectionReader{r: &r}
	p := NewParser(Options{OnLog: sr.line})
	r.Blocks = append(r.Blocks, p.Write([]byte(text))...)
	r.Blocks = append(r.Blocks, p.Flush()...)
	if sr.cur != nil {
		sr.flush()
	}

	seen, errs := r.fill()
	if len(r.Sections) == 0 {
		return r, errors.New("no standard sections found (Intent, Inputs, Plan, Actions, …)")
	}
	errs = append(errs, r.check(seen)...)
	return r, errors.Join(errs...)
}

// sectionReader gathers the reply's lines outside protocol blocks into its sections.
type sectionReader struct {
	r    *Reply
	cur  *Section
	cont []string // continuation lines of cur's last item, joined once (linear time)
}

func (sr *sectionReader) flush() {
	if len(sr.cont) > 0 {
		last := &sr.cur.Items[len(sr.cur.Items)-1]
		*last += " " + strings.Join(sr.cont, " ")
		sr.cont = sr.cont[:0]
	}
}

// line takes one line outside the blocks: a heading opens a section; a list item, or a
// line of text, is an item of the open one; an indented line continues its last item.
func (sr *sectionReader) line(line int, b []byte) {
	s := string(b)
	if name, rest, ok := heading(s); ok {
		sr.heading(s, name, rest, line)
		return
	}
	if sr.cur == nil || strings.TrimSpace(s) == "" || strings.HasPrefix(strings.TrimSpace(s), "```") {
		return
	}
	t := strings.TrimSpace(s)
	if m := listMarkerRE.FindString(t); m != "" {
		sr.flush()
		sr.cur.Items = append(sr.cur.Items, t[len(m):])
	} else if (s[0] == ' ' || s[0] == '\t') && len(sr.cur.Items) > 0 {
		sr.cont = append(sr.cont, t)
	} else {
		sr.flush()
		sr.cur.Items = append(sr.cur.Items, t)
	}
}

// heading opens a section, unless it is the DONE declaration under Next Steps.
func (sr *sectionReader) heading(s, name, rest string, line int) {
	r := sr.r
	isDone := strings.EqualFold(strings.Trim(strings.TrimSpace(s), "*#_ .!"), "done")
	if isDone {
		r.Done = true
		if sr.cur != nil && sr.cur.Name == SectionNext {
			return // "DONE" under Next Steps or DONE: the declaration, not a new section
		}
	}
	sr.flush()
	r.Sections = append(r.Sections, Section{Name: name, Line: line})
	sr.cur = &r.Sections[len(r.Sections)-1]
	if rest != "" {
		sr.cur.Items = append(sr.cur.Items, rest)
	}
}

// fill sets the reply's fields from its sections (the first of each name; a second is an
// error) and its form: Risks or Next Steps make it a response.
func (r *Reply) fill() (seen map[string]*Section, errs []error) {
	r.Form = FormMessage
	seen = map[string]*Section{}
	for i := range r.Sections {
		s := &r.Sections[i]
		if seen[s.Name] != nil {
			errs = append(errs, fmt.Errorf("line %d: section '%s' appears twice", s.Line, s.Name))
			continue
		}
		seen[s.Name] = s
		switch s.Name {
		case SectionIntent:
			r.Intent = strings.Join(s.Items, "\n")
		case SectionInputs:
			r.Inputs = s.Items
		case SectionPlan:
			r.Plan = s.Items
		case SectionActions:
			r.Actions = s.Items
		case SectionOpenQuestions:
			r.OpenQuestions = dropNone(s.Items)
		case SectionRisks:
			r.Risks = s.Items
			r.Form = FormResponse
		case SectionNext:
			r.Form = FormResponse
			for _, it := range s.Items {
				if strings.EqualFold(strings.TrimRight(it, ".!"), "done") {
					r.Done = true
				} else {
					r.NextSteps = append(r.NextSteps, it)
				}
			}
		}
	}
	return seen, errs
}

// check says how the sections depart from the form: missing ones, then the sizes the
// protocol sets for Intent, Plan and Open Questions.
func (r *Reply) check(seen map[string]*Section) (errs []error) {
	required := []string{SectionIntent, SectionInputs, SectionPlan, SectionActions}
	if r.Form == FormResponse {
		required = append(required, SectionRisks, SectionNext)
	}
	for _, name := range required {
		if seen[name] == nil {
			errs = append(errs, fmt.Errorf("missing section '%s'", r.sectionLabel(name)))
		}
	}
	if s := seen[SectionIntent]; s != nil {
		switch {
		case len(s.Items) == 0:
			errs = append(errs, fmt.Errorf("line %d: section 'Intent' is empty", s.Line))
		case len(s.Items) > 1:
			errs = append(errs, fmt.Errorf("line %d: section 'Intent' must be one line, has %d", s.Line, len(s.Items)))
		}
	}
	if s := seen[SectionPlan]; s != nil && (len(s.Items) < 3 || len(s.Items) > 7) {
		errs = append(errs, fmt.Errorf("line %d: section 'Plan' must have 3 to 7 steps, has %d", s.Line, len(s.Items)))
	}
	if s := seen[SectionOpenQuestions]; s != nil && len(r.OpenQuestions) > 3 {
		errs = append(errs, fmt.Errorf("line %d: section 'Open Questions' must have at most 3 questions, has %d", s.Line, len(r.OpenQuestions)))
	}
	return errs
}

// sectionLabel is a section's name as the reply's form spells it.
func (r Reply) sectionLabel(name string) string {
	if r.Form == FormMessage {
		switch name {
		case SectionInputs:
			return "Inputs"
		case SectionActions:
			return "Actions"
		}
	}
	return name
}

// dropNone removes "none"-style placeholders from a list of open questions.
func dropNone(items []string) []string {
	var out []string
	for _, it := range items {
		switch strings.ToLower(strings.TrimRight(strings.TrimSpace(it), ".")) {
		case "none", "n/a", "na", "-", "없음":
			continue
		}
		out = append(out, it)
	}
	return out
}
