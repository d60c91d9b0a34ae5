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

func hasMarker(text, marker string) bool { return strings.Contains(text, marker) }
