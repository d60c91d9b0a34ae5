package engine

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Structured lines agents are asked to print, read from anywhere in a reply:
// "KEY: value" on a line of its own (bullets and bold markers ignored). The last one wins.
func field(text, key string) (string, bool) {
	val, found := "", false
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimLeft(l, "-*> ")
		l = strings.TrimPrefix(l, "**")
		if len(l) <= len(key) || !strings.EqualFold(l[:len(key)], key) {
			continue
		}
		rest := strings.TrimPrefix(strings.TrimSpace(l[len(key):]), "**")
		if !strings.HasPrefix(rest, ":") {
			continue
		}
		val, found = strings.TrimSpace(strings.TrimPrefix(rest, ":")), true
	}
	return val, found
}

// jsonField reads "KEY: {json}" into a map; a plain value comes back as {"value": …}.
func jsonField(text, key string) (map[string]any, bool) {
	v, ok := field(text, key)
	if !ok {
		return nil, false
	}
	var m map[string]any
	if strings.HasPrefix(v, "{") && json.Unmarshal([]byte(v), &m) == nil {
		return m, true
	}
	return map[string]any{"value": v}, true
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
		return v, v.Decision != "" || v.Winner != ""
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
	f, err := strconv.ParseFloat(strings.Fields(s + " x")[0], 64)
	return f, err == nil
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

var punct = regexp.MustCompile(`[^\p{L}\p{N} ]+`)

// normalise makes answers comparable: case, punctuation and spacing do not count.
func normalise(a string) string {
	a = strings.ToLower(punct.ReplaceAllString(a, " "))
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

// cleanLine strips the bullets and bold marks agents put around structured lines.
func cleanLine(l string) string {
	l = strings.TrimSpace(l)
	l = strings.TrimLeft(l, "-*> ")
	l = strings.TrimPrefix(l, "**")
	return l
}

// keyed is one "WORD <key>: value" line.
type keyed struct{ Key, Value string }

// keyedLines reads every "WORD: value" or "WORD <key>: value" line, in order: POST <kind>:,
// PUBLISH <topic>:, REQUEST <capability>:, ASSIGN <id>:, ATTACK <n>:, CHECK <n>:, CLAIM:.
func keyedLines(text, word string) []keyed {
	var out []keyed
	for _, l := range strings.Split(text, "\n") {
		l = cleanLine(l)
		if len(l) <= len(word) || !strings.EqualFold(l[:len(word)], word) {
			continue
		}
		rest := l[len(word):]
		if rest[0] != ' ' && rest[0] != ':' && rest[0] != '*' {
			continue // a longer word (POSTED, CHECKS)
		}
		i := strings.Index(rest, ":")
		if i < 0 {
			continue
		}
		key := strings.Trim(strings.TrimSpace(rest[:i]), "*<>")
		out = append(out, keyed{Key: key, Value: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest[i+1:]), "**"))})
	}
	return out
}

// words reads every "WORD <arg>" line with no colon (SUBSCRIBE <topic>, UNSUBSCRIBE <topic>).
func words(text, word string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(cleanLine(l))
		if len(f) == 2 && strings.EqualFold(f[0], word) {
			out = append(out, f[1])
		}
	}
	return out
}

// metric reads "METRIC: name=N" (several name=N pairs may share a line); the last one wins.
func metric(text, name string) (float64, bool) {
	val, found := 0.0, false
	for _, k := range keyedLines(text, "METRIC") {
		for _, pair := range strings.Fields(strings.ReplaceAll(k.Value, ",", " ")) {
			n, v, ok := strings.Cut(pair, "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(n), name) {
				continue
			}
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				val, found = f, true
			}
		}
	}
	return val, found
}

// jsonLines returns every line of text that is a JSON object, in order.
func jsonLines(text string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(strings.Trim(strings.TrimSpace(l), "`"))
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// lastAnswer is the last ANSWER: line's value, if any (P08 drops replies without one).
func lastAnswer(text string) (string, bool) {
	a, ok := field(text, "ANSWER")
	return strings.Join(strings.Fields(a), " "), ok && strings.TrimSpace(a) != ""
}
