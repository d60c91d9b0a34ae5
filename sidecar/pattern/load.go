package pattern

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// DocSections are the headings every pattern document must have, in this order.
var DocSections = []string{
	"## Roles",
	"## Steps",
	"## Default termination",
	"## When to use",
	"## When not to use",
	"## How AgentCanvas runs it",
	"## Sources",
}

var (
	roleIDRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	fileRe   = regexp.MustCompile(`^(P[0-9]{2})-([a-z0-9_]+)\.json$`)
)

// Load reads every <ID>-<patternId>.json template and its .md document from the top of fsys,
// checks them, and returns the 20 patterns in P-number order. Every problem is reported, each
// prefixed with its file name (and line:column for JSON syntax errors).
func Load(fsys fs.FS) ([]Pattern, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("pattern library: %w", err)
	}
	var errs []error
	byID := map[string]Pattern{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || path.Ext(name) != ".json" {
			continue
		}
		m := fileRe.FindStringSubmatch(name)
		if m == nil {
			errs = append(errs, fmt.Errorf("%s: file name must be <ID>-<patternId>.json, e.g. P05-debate_judge.json", name))
			continue
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		t, err := ParseTemplate(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if t.ID != m[1] || t.PatternID != m[2] {
			errs = append(errs, fmt.Errorf("%s: file name says %s-%s but the template has id %q, patternId %q", name, m[1], m[2], t.ID, t.PatternID))
			continue
		}
		mdName := strings.TrimSuffix(name, ".json") + ".md"
		doc, err := fs.ReadFile(fsys, mdName)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: the document beside the template: %w", mdName, err))
			continue
		}
		if err := checkDoc(t, string(doc)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", mdName, err))
			continue
		}
		if _, dup := byID[t.ID]; dup {
			errs = append(errs, fmt.Errorf("%s: a second template with id %s", name, t.ID))
			continue
		}
		byID[t.ID] = Pattern{
			ID:                 t.ID,
			PatternID:          t.PatternID,
			Name:               t.Name,
			Topology:           t.Topology,
			Roles:              t.Roles,
			DefaultTermination: t.DefaultTermination,
			DefaultParams:      t.Params,
			Doc:                string(doc),
			Template:           *t,
		}
	}
	out := make([]Pattern, 0, len(CanonicalIDs))
	for i := range CanonicalIDs {
		id := fmt.Sprintf("P%02d", i+1)
		p, ok := byID[id]
		if !ok {
			errs = append(errs, fmt.Errorf("%s-%s.json: missing from the pattern library", id, CanonicalIDs[i]))
			continue
		}
		out = append(out, p)
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	return out, nil
}

// ParseTemplate decodes one .json template strictly (unknown fields are errors) and checks it.
func ParseTemplate(data []byte) (*Template, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var t Template
	if err := dec.Decode(&t); err != nil {
		return nil, jsonError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the template object")
	}
	t.Params, _ = normalizeNumbers(t.Params).(map[string]any)
	if err := CheckTemplate(&t); err != nil {
		return nil, err
	}
	return &t, nil
}

// jsonError adds line:column to JSON syntax and type errors.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 1 || off > int64(len(data)) {
		return err
	}
	// Offset counts the bytes read, the offending one included: point at that byte.
	before := data[:off-1]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("%d:%d: %w", line, col, err)
}

// CheckTemplate checks a template's own consistency and the spec §8 rules for its defaults.
// Every problem is reported, as "field: problem", section by section in the file's order.
func CheckTemplate(t *Template) error {
	var ps problems
	ps.identity(t)
	roles := ps.roles(t.Roles)
	ps.edges(t, roles)
	ps.routes(t.Routes, roles)
	ps.defaults(t)
	return errors.Join(ps...)
}

// problems collects every problem of a template, so one load reports them all.
type problems []error

func (ps *problems) add(format string, a ...any) { *ps = append(*ps, fmt.Errorf(format, a...)) }

// identity checks the id against the canonical list, the required texts and the axes.
func (ps *problems) identity(t *Template) {
	n := -1
	if _, err := fmt.Sscanf(t.ID, "P%02d", &n); err != nil || len(t.ID) != 3 || n < 1 || n > len(CanonicalIDs) {
		ps.add("id: %q is not one of P01…P%02d", t.ID, len(CanonicalIDs))
	} else if t.PatternID != CanonicalIDs[n-1] {
		ps.add("patternId: %s is %q, not %q", t.ID, CanonicalIDs[n-1], t.PatternID)
	}
	for _, f := range []struct{ field, v string }{{"name", t.Name}, {"summary", t.Summary}} {
		if strings.TrimSpace(f.v) == "" {
			ps.add("%s: is required", f.field)
		}
	}
	for _, f := range []struct {
		field, v string
		enum     []string
	}{
		{"intent", t.Intent, Intents}, {"topology", t.Topology, Topologies},
		{"messageForm", t.MessageForm, MessageForms}, {"sync", t.Sync, SyncModes},
		{"verification", t.Verification, Verifications}, {"layout", t.Layout, []string{"TB", "LR"}},
	} {
		if !slices.Contains(f.enum, f.v) {
			ps.add("%s: %q is not one of %s", f.field, f.v, strings.Join(f.enum, ", "))
		}
	}
}

// roles checks each role and that there is at least one agent; it returns the roles by id
// for the edges and routes to be checked against.
func (ps *problems) roles(rs []Role) map[string]Role {
	roles := map[string]Role{}
	agents := 0
	if len(rs) == 0 {
		ps.add("roles: at least one role is required")
	}
	for i, r := range rs {
		at := fmt.Sprintf("roles[%d]", i)
		if !roleIDRe.MatchString(r.Role) {
			ps.add("%s.role: %q must be lower snake_case", at, r.Role)
		}
		if _, dup := roles[r.Role]; dup {
			ps.add("%s.role: %q is declared twice", at, r.Role)
		}
		roles[r.Role] = r
		if strings.TrimSpace(r.Name) == "" || strings.TrimSpace(r.Description) == "" {
			ps.add("%s: name and description are required", at)
		}
		if r.Kind == "agent" {
			agents++
		}
		ps.roleKind(at, r)
		if r.Count < 1 || r.Count > MaxRoleCount || r.MinCount < 0 || r.MinCount > r.Count {
			ps.add("%s: count must be 1…%d and 0 ≤ minCount ≤ count (count %d, minCount %d)", at, MaxRoleCount, r.Count, r.MinCount)
		}
		if r.Layer < 0 || r.Layer > 9 {
			ps.add("%s.layer: %d must be 0…9", at, r.Layer)
		}
	}
	if agents == 0 && len(rs) > 0 {
		ps.add("roles: at least one agent role is required")
	}
	return roles
}

// roleKind checks what a role's kind asks of it: an agent needs a default runtime, a system
// role a known system type; any runtime must be one the sidecar can start.
func (ps *problems) roleKind(at string, r Role) {
	switch r.Kind {
	case "agent":
		if r.SystemType != "" {
			ps.add("%s.systemType: only system roles have one", at)
		}
		if r.Runtime == nil {
			ps.add("%s.runtime: an agent role needs a default runtime", at)
		}
	case "system":
		if !slices.Contains(SystemTypes, r.SystemType) {
			ps.add("%s.systemType: %q is not one of %s", at, r.SystemType, strings.Join(SystemTypes, ", "))
		}
	default:
		ps.add("%s.kind: %q must be agent or system", at, r.Kind)
	}
	if rt := r.Runtime; rt != nil {
		if rt.Kind != "cli" || !slices.Contains(BackendIDs, rt.BackendID) || !slices.Contains([]string{"", "workspace", "agentHome"}, rt.CwdMode) {
			ps.add("%s.runtime: needs kind cli, a backendId of %s, and cwdMode workspace or agentHome", at, strings.Join(BackendIDs, ", "))
		}
	}
}

// edges checks each role edge, then that every role is on one.
func (ps *problems) edges(t *Template, roles map[string]Role) {
	used := map[string]bool{}
	pairs := map[[2]string]bool{}
	if len(t.Edges) == 0 {
		ps.add("edges: at least one edge is required")
	}
	for i, e := range t.Edges {
		at := fmt.Sprintf("edges[%d]", i)
		for _, end := range []struct{ field, role string }{{"source", e.Source}, {"target", e.Target}} {
			if _, ok := roles[end.role]; !ok {
				ps.add("%s.%s: %q is not a declared role", at, end.field, end.role)
			}
			used[end.role] = true
		}
		if pairs[[2]string{e.Source, e.Target}] {
			ps.add("%s: a second edge %s → %s", at, e.Source, e.Target)
		}
		pairs[[2]string{e.Source, e.Target}] = true
		switch e.Mode {
		case "":
		case "partition":
			if e.Source == e.Target {
				ps.add("%s.mode: partition needs two different roles", at)
			}
		default:
			ps.add("%s.mode: %q must be empty or partition", at, e.Mode)
		}
		if e.Source == e.Target && roles[e.Source].MinCount < 2 {
			ps.add("%s: an edge from %q to itself needs minCount ≥ 2", at, e.Source)
		}
		if len(e.Messages) == 0 {
			ps.add("%s.messages: name what travels on the edge", at)
		}
	}
	for _, r := range t.Roles {
		if !used[r.Role] {
			ps.add("roles: %q is on no edge", r.Role)
		}
	}
}

// routes checks the messages the pattern exchanges: between declared roles, one route per
// pair, each naming what travels on it.
func (ps *problems) routes(rs []Route, roles map[string]Role) {
	if len(rs) == 0 {
		ps.add("routes: list the messages the pattern exchanges between its roles")
	}
	routed := map[[2]string]bool{}
	for i, r := range rs {
		at := fmt.Sprintf("routes[%d]", i)
		for _, end := range []struct{ field, role string }{{"from", r.From}, {"to", r.To}} {
			if _, ok := roles[end.role]; !ok {
				ps.add("%s.%s: %q is not a declared role", at, end.field, end.role)
			}
		}
		if routed[[2]string{r.From, r.To}] {
			ps.add("%s: a second route %s → %s; list its messages in one", at, r.From, r.To)
		}
		routed[[2]string{r.From, r.To}] = true
		if r.From == r.To && roles[r.From].MinCount < 2 {
			ps.add("%s: a route from %q to itself needs minCount ≥ 2", at, r.From)
		}
		if len(r.Messages) == 0 {
			ps.add("%s.messages: name what travels on the route", at)
		}
	}
}

// defaults checks what every instance inherits: the default termination and params against
// the §8 policy rules, logging, and the sources the pattern comes from.
func (ps *problems) defaults(t *Template) {
	if err := t.DefaultTermination.check("defaultTermination"); err != nil {
		*ps = append(*ps, err)
	}
	for _, p := range PolicyProblems(t.PatternID, t.Topology, t.DefaultTermination, t.Params) {
		ps.add("defaultTermination/params: %s", p)
	}
	if !t.Observability.Logs {
		ps.add("observability.logs: must be true (every interaction is logged)")
	}
	if len(t.Sources) == 0 {
		ps.add("sources: at least one source is required")
	}
	for i, s := range t.Sources {
		if (s.Kind != "paper" && s.Kind != "spec") || strings.TrimSpace(s.Ref) == "" {
			ps.add("sources[%d]: needs kind paper or spec and a ref", i)
		}
	}
}

// checkDoc requires the title line and the DocSections headings, in order.
func checkDoc(t *Template, doc string) error {
	title := "# " + t.ID + " "
	if !strings.HasPrefix(doc, title) {
		return fmt.Errorf("line 1: must start with %q", title+"— "+t.Name)
	}
	pos := 0
	for _, h := range DocSections {
		i := strings.Index(doc[pos:], "\n"+h+"\n")
		if i < 0 {
			return fmt.Errorf("missing section %q (sections in order: %s)", h, strings.Join(DocSections, ", "))
		}
		pos += i + 1
		if h == "## How AgentCanvas runs it" {
			// The document lists the routes the engine allows, so the two cannot drift.
			end := strings.Index(doc[pos+len(h):], "\n## ")
			how := doc[pos:]
			if end >= 0 {
				how = doc[pos : pos+len(h)+end]
			}
			for _, r := range t.Routes {
				if !strings.Contains(how, r.Text()) {
					return fmt.Errorf("section %q must list the route %s", h, r.Text())
				}
			}
		}
		if h == "## Default termination" {
			// The document must state the template's termination, so the two cannot drift.
			want := "`" + t.DefaultTermination.String() + "`"
			end := strings.Index(doc[pos+len(h):], "\n## ")
			if end < 0 || !strings.Contains(doc[pos:pos+len(h)+end], want) {
				return fmt.Errorf("section %q must state the template's termination as %s", h, want)
			}
		}
	}
	return nil
}
