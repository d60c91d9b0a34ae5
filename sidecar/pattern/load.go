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
// Every problem is reported, as "field: problem".
func CheckTemplate(t *Template) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	n := -1
	if _, err := fmt.Sscanf(t.ID, "P%02d", &n); err != nil || len(t.ID) != 3 || n < 1 || n > len(CanonicalIDs) {
		bad("id: %q is not one of P01…P%02d", t.ID, len(CanonicalIDs))
	} else if t.PatternID != CanonicalIDs[n-1] {
		bad("patternId: %s is %q, not %q", t.ID, CanonicalIDs[n-1], t.PatternID)
	}
	for _, f := range []struct{ field, v string }{{"name", t.Name}, {"summary", t.Summary}} {
		if strings.TrimSpace(f.v) == "" {
			bad("%s: is required", f.field)
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
			bad("%s: %q is not one of %s", f.field, f.v, strings.Join(f.enum, ", "))
		}
	}

	roles := map[string]Role{}
	agents := 0
	if len(t.Roles) == 0 {
		bad("roles: at least one role is required")
	}
	for i, r := range t.Roles {
		at := fmt.Sprintf("roles[%d]", i)
		if !roleIDRe.MatchString(r.Role) {
			bad("%s.role: %q must be lower snake_case", at, r.Role)
		}
		if _, dup := roles[r.Role]; dup {
			bad("%s.role: %q is declared twice", at, r.Role)
		}
		roles[r.Role] = r
		if strings.TrimSpace(r.Name) == "" || strings.TrimSpace(r.Description) == "" {
			bad("%s: name and description are required", at)
		}
		switch r.Kind {
		case "agent":
			agents++
			if r.SystemType != "" {
				bad("%s.systemType: only system roles have one", at)
			}
			if r.Runtime == nil {
				bad("%s.runtime: an agent role needs a default runtime", at)
			}
		case "system":
			if !slices.Contains(SystemTypes, r.SystemType) {
				bad("%s.systemType: %q is not one of %s", at, r.SystemType, strings.Join(SystemTypes, ", "))
			}
		default:
			bad("%s.kind: %q must be agent or system", at, r.Kind)
		}
		if rt := r.Runtime; rt != nil {
			if rt.Kind != "cli" || !slices.Contains(BackendIDs, rt.BackendID) || !slices.Contains([]string{"", "workspace", "agentHome"}, rt.CwdMode) {
				bad("%s.runtime: needs kind cli, a backendId of %s, and cwdMode workspace or agentHome", at, strings.Join(BackendIDs, ", "))
			}
		}
		if r.Count < 1 || r.Count > MaxRoleCount || r.MinCount < 0 || r.MinCount > r.Count {
			bad("%s: count must be 1…%d and 0 ≤ minCount ≤ count (count %d, minCount %d)", at, MaxRoleCount, r.Count, r.MinCount)
		}
		if r.Layer < 0 || r.Layer > 9 {
			bad("%s.layer: %d must be 0…9", at, r.Layer)
		}
	}
	if agents == 0 && len(t.Roles) > 0 {
		bad("roles: at least one agent role is required")
	}

	used := map[string]bool{}
	pairs := map[[2]string]bool{}
	if len(t.Edges) == 0 {
		bad("edges: at least one edge is required")
	}
	for i, e := range t.Edges {
		at := fmt.Sprintf("edges[%d]", i)
		for _, end := range []struct{ field, role string }{{"source", e.Source}, {"target", e.Target}} {
			if _, ok := roles[end.role]; !ok {
				bad("%s.%s: %q is not a declared role", at, end.field, end.role)
			}
			used[end.role] = true
		}
		if pairs[[2]string{e.Source, e.Target}] {
			bad("%s: a second edge %s → %s", at, e.Source, e.Target)
		}
		pairs[[2]string{e.Source, e.Target}] = true
		switch e.Mode {
		case "":
		case "partition":
			if e.Source == e.Target {
				bad("%s.mode: partition needs two different roles", at)
			}
		default:
			bad("%s.mode: %q must be empty or partition", at, e.Mode)
		}
		if e.Source == e.Target && roles[e.Source].MinCount < 2 {
			bad("%s: an edge from %q to itself needs minCount ≥ 2", at, e.Source)
		}
		if len(e.Messages) == 0 {
			bad("%s.messages: name what travels on the edge", at)
		}
	}
	for _, r := range t.Roles {
		if !used[r.Role] {
			bad("roles: %q is on no edge", r.Role)
		}
	}
	if len(t.Routes) == 0 {
		bad("routes: list the messages the pattern exchanges between its roles")
	}
	routed := map[[2]string]bool{}
	for i, r := range t.Routes {
		at := fmt.Sprintf("routes[%d]", i)
		for _, end := range []struct{ field, role string }{{"from", r.From}, {"to", r.To}} {
			if _, ok := roles[end.role]; !ok {
				bad("%s.%s: %q is not a declared role", at, end.field, end.role)
			}
		}
		if routed[[2]string{r.From, r.To}] {
			bad("%s: a second route %s → %s; list its messages in one", at, r.From, r.To)
		}
		routed[[2]string{r.From, r.To}] = true
		if r.From == r.To && roles[r.From].MinCount < 2 {
			bad("%s: a route from %q to itself needs minCount ≥ 2", at, r.From)
		}
		if len(r.Messages) == 0 {
			bad("%s.messages: name what travels on the route", at)
		}
	}

	if err := t.DefaultTermination.check("defaultTermination"); err != nil {
		errs = append(errs, err)
	}
	for _, p := range PolicyProblems(t.PatternID, t.Topology, t.DefaultTermination, t.Params) {
		bad("defaultTermination/params: %s", p)
	}
	if !t.Observability.Logs {
		bad("observability.logs: must be true (every interaction is logged)")
	}
	if len(t.Sources) == 0 {
		bad("sources: at least one source is required")
	}
	for i, s := range t.Sources {
		if (s.Kind != "paper" && s.Kind != "spec") || strings.TrimSpace(s.Ref) == "" {
			bad("sources[%d]: needs kind paper or spec and a ref", i)
		}
	}
	return errors.Join(errs...)
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
