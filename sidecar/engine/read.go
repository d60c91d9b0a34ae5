package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Reading agents' replies. Prompts ask for structured lines ("ASSIGN worker_1: …",
// "VERDICT: …", "METRIC: score=8", "VOTE: red", "PERFORMATIVE: propose", "CLAIM: …"), and
// real models drift from the exact form. Every executor reads them through this file, which
// takes a keyword line in any of these forms (docs/runs.md, *Replies*):
//
//   - any case: "verdict: accept", "Verdict: accept"
//   - Markdown around the keyword or the line: "**VERDICT:** accept", "**VERDICT**: accept",
//     "*Verdict*: accept", "__VERDICT__: accept", "`VERDICT: accept`"
//   - a list, quote or heading mark, or numbering, before it: "- ", "* ", "+ ", "• ", "> ",
//     "[x] ", "1. ", "2) ", "## "
//   - a colon, a dash, an en dash or an em dash after the keyword (and its key):
//     "VERDICT - accept", "VERDICT — accept", "CHECK 2 – pass"
//   - backticks, quotes or angle brackets around the key or the value: "ASSIGN `worker_1`: …",
//     "ASSIGN <worker_1>: …", "VOTE: \"red\""
//   - a heading or a line holding only the keyword (and its colon), its value on the next
//     line: "## Decision\naccept", "**Decision:**\naccept"
//
// Where a pattern reads one value, the last such line wins.

// keywordAliases are other spellings of a keyword that models use for it.
var keywordAliases = map[string][]string{
	"ANSWER":   {"FINAL ANSWER"},
	"DECISION": {"FINAL DECISION"},
	"ACCEPT":   {"ACCEPTED"},
	"REJECT":   {"REJECTED"},
}

// hit is one line that starts with a keyword.
type hit struct {
	rest    string // the line after the keyword, Markdown closers removed
	heading bool   // the line was a Markdown heading
	next    string // the content of the next non-empty line, "" when it is a heading or a label
}

// numbering is the length of a list number at the start of s ("1. ", "12) "), 0 for none.
func numbering(s string) int {
	i := 0
	for i < len(s) && i < 3 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != '.' && s[i] != ')' || i+1 >= len(s) || s[i+1] != ' ' && s[i+1] != '\t' {
		return 0
	}
	return i + 2
}

// lineContent is a reply line without its list, quote, numbering and heading marks and
// leading Markdown emphasis; heading is true when it was a Markdown heading.
func lineContent(l string) (s string, heading bool) {
	s = strings.TrimSpace(l)
	for {
		before := s
		switch {
		case strings.HasPrefix(s, "#"):
			heading = true
			s = strings.TrimLeft(s, "#")
		case strings.HasPrefix(s, ">"):
			s = s[1:]
		case strings.HasPrefix(s, "- "), strings.HasPrefix(s, "+ "), strings.HasPrefix(s, "* "):
			s = s[2:]
		case strings.HasPrefix(s, "•"):
			s = s[len("•"):]
		case strings.HasPrefix(s, "[ ] "), strings.HasPrefix(s, "[x] "), strings.HasPrefix(s, "[X] "):
			s = s[4:]
		}
		if n := numbering(s); n > 0 {
			s = s[n:]
		}
		s = strings.TrimSpace(strings.TrimLeft(s, "*_`"))
		if s == before {
			return s, heading
		}
	}
}

// scan returns every line of text that starts with word or one of its aliases (whole words,
// any case), in order.
func scan(text, word string) []hit {
	words := append([]string{word}, keywordAliases[strings.ToUpper(word)]...)
	lines := strings.Split(text, "\n")
	var out []hit
	for i, l := range lines {
		s, heading := lineContent(l)
		for _, w := range words {
			rest, ok := afterWord(s, w)
			if !ok {
				continue
			}
			h := hit{rest: trimMarks(rest), heading: heading}
			for _, n := range lines[i+1:] {
				if strings.TrimSpace(n) == "" {
					continue
				}
				if c, hd := lineContent(n); !hd && !labelRE.MatchString(c) {
					h.next = cleanValue(c)
				}
				break
			}
			out = append(out, h)
			break
		}
	}
	return out
}

// labelRE is a line that is itself a structured line ("REASON: …"): never taken as the value
// of the keyword line above it.
var labelRE = regexp.MustCompile(`^[A-Z][A-Z_ ]{1,30}\s*(:|—|–| - )`)

// afterWord: s starts with word as a whole word (any case); rest is what follows it.
func afterWord(s, word string) (string, bool) {
	if len(s) < len(word) || !strings.EqualFold(s[:len(word)], word) {
		return "", false
	}
	rest := s[len(word):]
	// A longer word (POSTED, CHECKS, POST_x) is not this one; "VOTE__:" (the closing __ of
	// "__VOTE__:") is.
	if r, _ := utf8.DecodeRuneInString(strings.TrimLeft(rest, "_")); rest != "" && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
		return "", false
	}
	return rest, true
}

// trimMarks removes spaces and Markdown emphasis closers from the start of s ("**: x").
func trimMarks(s string) string { return strings.TrimLeft(s, " \t*_`") }

// splitSep splits "key: value" at its first separator (a colon, or a dash, en dash or em
// dash: a hyphen only between spaces or first, since ids and values hold hyphens).
func splitSep(s string) (key, value string, sep bool) {
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == ':', r == '—', r == '–', r == '-' && (strings.TrimSpace(s[:i]) == "" || i > 0 && s[i-1] == ' ' && i+1 < len(s) && s[i+1] == ' '):
			return s[:i], s[i+w:], true
		}
		i += w
	}
	return s, "", false
}

// cleanKey is a key without the marks models put around it: "**worker_1**", "`2`", "<id>",
// "#3", "worker_1_" (of "_ASSIGN worker_1_:"; ids neither start nor end with "_").
func cleanKey(k string) string {
	return strings.Trim(strings.TrimSpace(k), " *_`<>[]()\"'#")
}

// cleanValue is a value without the emphasis, backticks or quotes around it.
func cleanValue(v string) string {
	v = strings.TrimSpace(v)
	for {
		before := v
		v = strings.TrimSpace(strings.Trim(v, "*`"))
		if len(v) > 1 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'' || v[0] == '_' && v[len(v)-1] == '_' && !strings.Contains(v, " ")) {
			v = v[1 : len(v)-1]
		}
		if v == before {
			return v
		}
	}
}

// field reads "KEY: value" (the last such line wins; found with an empty value when the line
// has none and nothing follows it).
func field(text, key string) (string, bool) {
	val, found := "", false
	for _, h := range scan(text, key) {
		k, v, _ := splitSep(h.rest)
		if strings.TrimSpace(k) != "" {
			continue // "Decision makers: …" is prose
		}
		val, found = cleanValue(v), true
		if val == "" {
			val = h.next
		}
	}
	return val, found
}

// keyed is one "WORD <key>: value" line.
type keyed struct{ Key, Value string }

// keyedLines reads every "WORD: value" or "WORD <key>: value" line, in order: POST <kind>:,
// PUBLISH <topic>:, REQUEST <capability>:, ASSIGN <id>:, ATTACK <n>:, CHECK <n>:, CLAIM:.
// A key of more than four words is prose, not a key.
func keyedLines(text, word string) []keyed {
	var out []keyed
	for _, h := range scan(text, word) {
		k, v, sep := splitSep(h.rest)
		if !sep && strings.TrimSpace(h.rest) != "" || len(strings.Fields(k)) > 4 {
			continue
		}
		if v = cleanValue(v); v == "" && cleanKey(k) == "" {
			v = h.next // "## CLAIM" and the claim on the next line
		}
		if cleanKey(k) == "" && v == "" {
			continue
		}
		out = append(out, keyed{Key: cleanKey(k), Value: v})
	}
	return out
}

// bareLines reads "WORD <key>[: value]" lines whose separator may be missing ("ACCEPT
// worker_1", "REJECT worker_2: why"): without one, the key is the first word.
func bareLines(text, word string) []keyed {
	var out []keyed
	for _, h := range scan(text, word) {
		k, v, sep := splitSep(h.rest)
		if !sep {
			f := strings.Fields(h.rest)
			if len(f) == 0 {
				f = strings.Fields(h.next) // "## SUBSCRIBE" and the topic on the next line
			}
			if len(f) == 0 {
				continue
			}
			k, v = f[0], strings.Join(f[1:], " ")
		} else if cleanKey(k) == "" && cleanValue(v) == "" {
			k, v = "", h.next
		}
		if len(strings.Fields(k)) > 4 {
			continue
		}
		out = append(out, keyed{Key: cleanKey(k), Value: cleanValue(v)})
	}
	return out
}

// words reads every "WORD <arg>" line of one argument (SUBSCRIBE <topic>, UNSUBSCRIBE
// <topic>; "SUBSCRIBE: news" too).
func words(text, word string) []string {
	var out []string
	for _, k := range bareLines(text, word) {
		arg := k.Key
		if arg == "" {
			arg = k.Value
		} else if k.Value != "" {
			continue
		}
		if f := strings.Fields(strings.TrimRight(cleanKey(arg), ".,;")); len(f) == 1 {
			out = append(out, f[0])
		}
	}
	return out
}

// jsonField reads "KEY: {json}" into a map; a plain value comes back as {"value": …}.
func jsonField(text, key string) (map[string]any, bool) {
	v, ok := field(text, key)
	if !ok {
		return nil, false
	}
	var m map[string]any
	if strings.HasPrefix(v, "{") && json.Unmarshal([]byte(v), &m) == nil {
		return lowerKeys(m), true
	}
	return map[string]any{"value": v}, true
}

// metricValueRE is a metric's value after its name: "=1", ": 0.5", " — 8/10", "=true".
var metricValueRE = regexp.MustCompile(`(?i)^[ \t*_` + "`" + `]*(?:=|:|—|–|-|\bis\b)?[ \t*_` + "`" + `]*([-+]?\d+(?:\.\d+)?|true|false|yes|no|passed|pass|failed|fail)\b`)

// metricValue parses the value at the start of s.
func metricValue(s string) (float64, bool) {
	m := metricValueRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	switch strings.ToLower(m[1]) {
	case "true", "yes", "pass", "passed":
		return 1, true
	case "false", "no", "fail", "failed":
		return 0, true
	}
	f, err := strconv.ParseFloat(m[1], 64)
	return f, err == nil
}

// metric reads "METRIC: name=N" (several pairs may share a line, "name: N" and "name = N"
// too; "8/10" reads 8; true/false, pass/fail, yes/no read 1/0); the last one wins. Without a
// METRIC line, a line of the metric's own name is read: "Score: 8/10", "open_errors = 0".
func metric(text, name string) (float64, bool) {
	val, found := 0.0, false
	for _, h := range scan(text, "METRIC") {
		rest := h.rest
		if indexWord(rest, name) < 0 {
			rest = h.next // "## Metrics" and its values on the next line
		}
		for {
			i := indexWord(rest, name)
			if i < 0 {
				break
			}
			rest = rest[i+len(name):]
			if f, ok := metricValue(rest); ok {
				val, found = f, true
			}
		}
	}
	if found {
		return val, true
	}
	for _, h := range scan(text, name) {
		if f, ok := metricValue(h.rest); ok {
			val, found = f, true
		}
	}
	return val, found
}

// indexWord is the index of word in s as a whole word (any case), or -1.
func indexWord(s, word string) int {
	for off := 0; off+len(word) <= len(s); {
		i := strings.Index(strings.ToLower(s[off:]), strings.ToLower(word))
		if i < 0 || off+i+len(word) > len(s) {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(word):])
		if (i == 0 || !isWordRune(before)) && (i+len(word) == len(s) || !isWordRune(after)) {
			return i
		}
		off = i + 1
	}
	return -1
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// jsonScanLimit bounds how far a JSON object may run on from the line it starts on.
const jsonScanLimit = 64 << 10

// jsonLines returns every JSON object in text that starts a line (after a list mark or
// backticks, in a ```json fence or not), in order; an object may run over several lines.
// Top-level keys are lower-cased ({"Act": …} reads as {"act": …}).
func jsonLines(text string) []map[string]any {
	var out []map[string]any
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l, _ := lineContent(lines[i])
		if !strings.HasPrefix(l, "{") {
			continue
		}
		// The object on this line alone; only one cut short by the line's end is read on.
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(l))
		err := dec.Decode(&m)
		if errors.Is(err, io.ErrUnexpectedEOF) && i+1 < len(lines) {
			rest := l + "\n" + strings.Join(lines[i+1:], "\n")
			if len(rest) > jsonScanLimit {
				rest = rest[:jsonScanLimit]
			}
			m = nil
			dec = json.NewDecoder(strings.NewReader(rest))
			if err = dec.Decode(&m); err == nil {
				i += strings.Count(rest[:dec.InputOffset()], "\n") // the lines the object took
			}
		}
		if err != nil || m == nil {
			continue
		}
		out = append(out, lowerKeys(m))
	}
	return out
}

func lowerKeys(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		lk := strings.ToLower(k)
		if _, dup := out[lk]; !dup || k == lk {
			out[lk] = v
		}
	}
	return out
}

// markerLine is the text after the marker (<INFO>) on the first line that starts with it.
func markerLine(text, marker string) (string, bool) {
	for _, l := range strings.Split(text, "\n") {
		s, _ := lineContent(l)
		if rest, ok := afterMarker(s, marker); ok {
			return cleanValue(strings.TrimLeft(trimMarks(rest), ":—– ")), true
		}
	}
	return "", false
}

func afterMarker(s, marker string) (string, bool) {
	if len(s) < len(marker) || !strings.EqualFold(s[:len(marker)], marker) {
		return "", false
	}
	return s[len(marker):], true
}

// mdSection is the body under a section header of that title: a Markdown heading of any
// level ("## MEMORY", "# Memory:"), or a line holding only the title in bold or with a colon
// ("**MEMORY**", "MEMORY:"). It ends at a heading of the same or a higher level, or at the
// header of one of the sibling sections.
func mdSection(text, title string, siblings ...string) string {
	var out []string
	level := -1 // -1: not in the section
	for _, l := range strings.Split(text, "\n") {
		lv, t, isHeader := sectionHeader(l)
		if isHeader {
			switch {
			case titled(t, title):
				level = lv
				out = out[:0]
				continue
			case level >= 0 && lv > 0 && (level == 0 || lv <= level):
				level = -1
				continue
			case level >= 0 && slices.ContainsFunc(siblings, func(s string) bool { return titled(t, s) }):
				level = -1
				continue
			}
		}
		if level >= 0 {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// titled: a header's title is title, alone or followed by a remark ("MEMORY (the new file)").
func titled(t, title string) bool {
	if strings.EqualFold(t, title) {
		return true
	}
	rest, ok := afterWord(t, title)
	return ok && strings.HasPrefix(strings.TrimSpace(rest), "(")
}

// sectionHeader reads a header line: its Markdown heading level (0 for a bold or colon line)
// and its title.
func sectionHeader(l string) (level int, title string, ok bool) {
	t := strings.TrimSpace(l)
	if strings.HasPrefix(t, "#") {
		level = len(t) - len(strings.TrimLeft(t, "#"))
		title = strings.Trim(strings.TrimSpace(t[level:]), " *_:")
		return level, title, title != ""
	}
	bold := strings.HasPrefix(t, "**") && strings.HasSuffix(t, "**") && len(t) > 4
	colon := strings.HasSuffix(t, ":") && !strings.Contains(strings.TrimSuffix(t, ":"), ":")
	if !bold && !colon {
		return 0, "", false
	}
	title = strings.Trim(t, " *_:")
	if title == "" || len(strings.Fields(title)) > 3 {
		return 0, "", false
	}
	return 0, title, true
}

// verdict is a judge's decision: VERDICT: {"decision":…,"winner":…,"score":…,"reason":…}
// or DECISION: <text>.
type verdict struct {
	Decision string
	Winner   string
	Score    float64
	HasScore bool
	Reason   string
}

func readVerdict(text string) (verdict, bool) {
	if m, ok := jsonField(text, "VERDICT"); ok {
		v := verdict{Decision: str(m["decision"], m["value"]), Winner: str(m["winner"]), Reason: str(m["reason"])}
		v.Score, v.HasScore = num(m["score"])
		if v.Decision != "" || v.Winner != "" {
			return v, true
		}
	}
	if d, ok := field(text, "DECISION"); ok && d != "" {
		v := verdict{Decision: d}
		v.Score, v.HasScore = readScore(text)
		return v, true
	}
	return verdict{}, false
}

func readScore(text string) (float64, bool) {
	s, ok := field(text, "SCORE")
	if !ok {
		return 0, false
	}
	return metricValue(s)
}

// leadsWith reports whether value starts with the word w, as a word: case, Markdown, quotes,
// marks before it ("✅ pass") and "_" or a space for "-" do not count ("Inform_Done." leads
// with inform-done).
func leadsWith(value, w string) bool {
	v := strings.ToLower(strings.TrimLeftFunc(value, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
	v = strings.NewReplacer("_", "-", " ", "-").Replace(v)
	w = strings.ToLower(w)
	if !strings.HasPrefix(v, w) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(v[len(w):])
	return len(v) == len(w) || !(unicode.IsLetter(r) || unicode.IsDigit(r))
}

// pickID is the id a value names: the whole value, or its first word, is one of ids or one
// of their names (any case, Markdown and punctuation around it ignored); "" when none.
func pickID(value string, ids []string, names map[string]string) string {
	v := cleanKey(strings.TrimRight(cleanValue(value), ".,;!"))
	first := v
	if f := strings.FieldsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",;:()[]", r) }); len(f) > 0 {
		first = cleanKey(strings.TrimRight(f[0], ".,;!"))
	}
	for _, cand := range []string{v, first} {
		for _, id := range ids {
			if strings.EqualFold(cand, id) || names[id] != "" && strings.EqualFold(cand, names[id]) {
				return id
			}
		}
	}
	return ""
}

// verdictLines are a review's ACCEPT or REJECT lines naming one of ids ("REJECT coder: why",
// "**Accepted:** worker_1", "ACCEPT all"), the id resolved.
func verdictLines(text, word string, ids []string) []keyed {
	var out []keyed
	for _, k := range bareLines(text, word) {
		key, value := k.Key, k.Value
		if key == "" { // "REJECT: coder — why"
			f := strings.Fields(value)
			if len(f) == 0 {
				continue
			}
			key, value = f[0], strings.TrimLeft(strings.TrimPrefix(value, f[0]), " :—–-")
		}
		if id := pickID(key, ids, nil); id != "" {
			out = append(out, keyed{Key: id, Value: value})
		}
	}
	return out
}

// vote is a ballot's VOTE: line ({"vote": …} too); a number ("2", "option 2", "#2") names
// the proposed option of that number.
func vote(text string, proposed []string) string {
	m, ok := jsonField(text, "VOTE")
	if !ok {
		return ""
	}
	v := strings.TrimSpace(strings.TrimRight(cleanValue(fmt.Sprint(firstNonNil(m["vote"], m["value"]))), "."))
	if n := optionNumberRE.FindStringSubmatch(v); n != nil {
		if i, err := strconv.Atoi(n[1]); err == nil && i >= 1 && i <= len(proposed) {
			return proposed[i-1]
		}
	}
	return v
}

var optionNumberRE = regexp.MustCompile(`(?i)^(?:option\s*)?#?(\d+)$`)

func firstNonNil(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return ""
}

// readAct is a reply's last valid act ("Counter-offer" reads as counteroffer; an offer needs
// terms), "" when it has none.
func readAct(text string) (act string, terms any) {
	for _, m := range jsonLines(text) {
		a := strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(str(m["act"])))
		switch {
		case (a == "offer" || a == "counteroffer") && m["terms"] != nil, a == "accept", a == "reject":
			act, terms = a, m["terms"]
		}
	}
	return act, terms
}

// routeTo are a route line's tags ("to" may be one tag).
func routeTo(m map[string]any) []string {
	if s := str(m["to"]); s != "" {
		return []string{s}
	}
	return stringList(m["to"])
}

// checks reads a verifier's CHECK <n>: lines for claims 1…claims ("CHECK #2 — PASS (…)"),
// the last per claim.
func checks(text string, claims int) map[int]string {
	out := map[int]string{}
	for _, k := range keyedLines(text, "CHECK") {
		if n, err := strconv.Atoi(strings.TrimPrefix(k.Key, "#")); err == nil && n >= 1 && n <= claims {
			out[n] = k.Value
		}
	}
	return out
}

// answer is a reply's answer for voting and consensus: ANSWER:, else VOTE:, else a
// verdict's decision, else the first line of its Actions/Artifacts section, else its first line.
func answer(text string) string {
	if a, ok := field(text, "ANSWER"); ok && a != "" {
		return a
	}
	if m, ok := jsonField(text, "VOTE"); ok {
		return str(m["vote"], m["answer"], m["value"])
	}
	if v, ok := readVerdict(text); ok {
		return firstNonEmpty(v.Winner, v.Decision)
	}
	if s := section(text, "Actions/Artifacts"); s != "" {
		return firstLine(s)
	}
	return firstLine(text)
}

// punct is compiled on first use: its Unicode classes made it one of the dearest regexps to
// compile at every start of the binary.
var punct = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^\p{L}\p{N} ]+`) })

// normalise makes answers comparable: case, punctuation and spacing do not count.
func normalise(a string) string {
	a = strings.ToLower(punct().ReplaceAllString(a, " "))
	return strings.Join(strings.Fields(a), " ")
}

// section returns the body of a numbered section of the standard response format.
func section(text, title string) string {
	lines := strings.Split(text, "\n")
	var out []string
	in := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if isSectionHeader(t) {
			if in {
				break
			}
			in = strings.Contains(strings.ToLower(t), strings.ToLower(title))
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

var sectionRE = regexp.MustCompile(`^#*\s*\d\.\s+[A-Z][A-Za-z/ ]+$`)

func isSectionHeader(l string) bool { return sectionRE.MatchString(l) }

// majority returns the most common normalised answer, its share, and a representative.
func majority(answers []string) (winner string, share float64, tie bool) {
	if len(answers) == 0 {
		return "", 0, false
	}
	counts := map[string]int{}
	first := map[string]string{}
	order := []string{}
	for _, a := range answers {
		n := normalise(a)
		if _, ok := counts[n]; !ok {
			order = append(order, n)
			first[n] = a
		}
		counts[n]++
	}
	best, bestN, ties := "", 0, 0
	for _, n := range order {
		switch {
		case counts[n] > bestN:
			best, bestN, ties = n, counts[n], 0
		case counts[n] == bestN:
			ties++
		}
	}
	return first[best], float64(bestN) / float64(len(answers)), ties > 0
}

var urlRE = regexp.MustCompile(`https?://\S+|\[\d+\]|arXiv:\d{4}\.\d{4,5}|doi:\S+`)

// citations counts distinct citations: a CITATIONS: n line, else URLs, [n] and arXiv/doi refs.
func citations(text string) int {
	if s, ok := field(text, "CITATIONS"); ok {
		if n, err := strconv.Atoi(strings.Fields(s + " x")[0]); err == nil {
			return n
		}
	}
	seen := map[string]bool{}
	for _, m := range urlRE.FindAllString(text, -1) {
		seen[m] = true
	}
	return len(seen)
}

func str(vs ...any) string {
	for _, v := range vs {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func num(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case string:
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil
	}
	return 0, false
}

// lastAnswer is the last ANSWER: line's value, if any (P08 drops replies without one).
func lastAnswer(text string) (string, bool) {
	a, ok := field(text, "ANSWER")
	return strings.Join(strings.Fields(a), " "), ok && strings.TrimSpace(a) != ""
}
