package engine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestKeyedLines(t *testing.T) {
	text := "intro\n- POST hypothesis: h1\n**POST solution**: s\nPOSTED: no\nPOST: bare\nCHECK 2: fail — x"
	got := keyedLines(text, "POST")
	want := []keyed{{"hypothesis", "h1"}, {"solution", "s"}, {"", "bare"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("POST lines %v, want %v", got, want)
	}
	if got := keyedLines(text, "CHECK"); len(got) != 1 || got[0].Key != "2" || got[0].Value != "fail — x" {
		t.Errorf("CHECK lines %v", got)
	}
}

func TestMetric(t *testing.T) {
	for _, tc := range []struct {
		text, name string
		want       float64
		ok         bool
	}{
		{"METRIC: score=5\nMETRIC: score=8", "score", 8, true},
		{"- METRIC: open_errors=0 score=10", "open_errors", 0, true},
		{"METRIC: tests_passed=1, artifact_valid=0", "artifact_valid", 0, true},
		{"METRIC: score=high", "score", 0, false},
		{"score=3", "score", 3, true}, // a line of the metric's own name
		{"the score was 3", "score", 0, false},
	} {
		got, ok := metric(tc.text, tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("metric(%q, %s) = %v, %v; want %v, %v", tc.text, tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestJSONLinesAndWords(t *testing.T) {
	text := "thinking\n{\"act\": \"offer\", \"terms\": {\"p\": 1}}\n`{\"to\": [\"a\"]}`\n{broken\nSUBSCRIBE news\nUNSUBSCRIBE news\nSUBSCRIBE to everything"
	if got := jsonLines(text); len(got) != 2 || got[0]["act"] != "offer" {
		t.Errorf("json lines %v", got)
	}
	if got := words(text, "SUBSCRIBE"); !reflect.DeepEqual(got, []string{"news"}) {
		t.Errorf("SUBSCRIBE %v", got)
	}
	if a, ok := lastAnswer("ANSWER: 1\nANSWER:   4   2 "); !ok || a != "4 2" {
		t.Errorf("lastAnswer = %q, %v", a, ok)
	}
	if _, ok := lastAnswer("no answer"); ok {
		t.Error("a reply without ANSWER: has an answer")
	}
}

// The readers take agents' raw output: no input may make them panic, and what they return
// comes from the text.
func FuzzReaders(f *testing.F) {
	for _, s := range []string{
		"METRIC: score=5 open_errors=0\nDECISION: accept",
		"POST solution: s\nPOST : x\nPOST",
		"CHECK 1: pass — e\nCLAIM: c [1] https://x",
		"{\"act\": \"offer\", \"terms\": {}}\n{\"to\": [\"peer\"], \"text\": \"t\"}",
		"VERDICT: {\"decision\":\"accept\",\"score\":\"x\"}\nVOTE: {\"vote\": 3}",
		"<INFO>\n**ASSIGN w1**: a\n1. Intent\n- x",
		"METRIC: =\nMETRIC: a==1\nSUBSCRIBE",
		"## Verdict\n**accept**\n__ASSIGN worker_1__ — x\n- [x] REJECT: worker_1 - no",
		"```json\n{\n  \"Act\": \"Counter-Offer\",\n  \"terms\": {}\n}\n```\n{\"to\": \"peer\"}",
		"### MEMORY (new)\n### Decisions\n- x\nNOTES:\n- y\n**<INFO>**: done",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// What the readers return is cut from the text: a reader never makes up a value.
		from := func(what, v string) {
			if !strings.Contains(s, v) {
				t.Fatalf("%s %q is not in the text", what, v)
			}
		}
		for _, w := range []string{"POST", "CHECK", "CLAIM", "ASSIGN", "PUBLISH", "REQUEST", "ATTACK"} {
			for _, k := range keyedLines(s, w) {
				from(w+" key", k.Key)
				from(w+" value", k.Value)
			}
		}
		for _, w := range []string{"ACCEPT", "REJECT"} {
			for _, k := range verdictLines(s, w, []string{"worker_1", "all"}) {
				from(w, k.Value)
			}
		}
		for _, w := range []string{"VERDICT", "DECISION", "ANSWER", "VOTE", "PERFORMATIVE", "STANDING"} {
			v, _ := field(s, w)
			from(w, v)
		}
		if id := pickID(s, []string{"a", "b_1"}, map[string]string{"a": "Alice"}); id != "" && id != "a" && id != "b_1" {
			t.Fatalf("pickID made up %q", id)
		}
		from("MEMORY", mdSection(s, "MEMORY", "NOTES"))
		for _, w := range words(s, "SUBSCRIBE") {
			from("SUBSCRIBE", w)
		}
		metric(s, "score")
		jsonLines(s)
		readAct(s)
		readVerdict(s)
		answer(s)
		lastAnswer(s)
		markerLine(s, "<INFO>")
		leadsWith(s, "inform-done")
		checks(s, 3)
		vote(s, []string{"red", "blue"})
		citations(s)
	})
}

// driftForms are the ways models write the structured line "WORD key: value" (key "" for a
// plain "WORD: value"): case, Markdown around the keyword or the line, list, quote, numbering
// and heading marks, a colon, dash, en dash or em dash, backticks and quotes, and the value on
// the line after a heading or a lone keyword.
func driftForms(word, key, value string) []string {
	tw := word[:1] + strings.ToLower(word[1:])
	k := ""
	if key != "" {
		k = " " + key
	}
	forms := []string{
		word + k + ": " + value,
		strings.ToLower(word) + k + ": " + value,
		tw + k + ": " + value,
		"**" + word + k + ":** " + value,
		"**" + word + k + "**: " + value,
		"**" + tw + "**" + k + ": " + value,
		"*" + tw + k + "*: " + value,
		"_" + tw + k + "_: " + value,
		"__" + word + k + "__: " + value,
		"`" + word + k + ": " + value + "`",
		"- " + word + k + ": " + value,
		"* " + word + k + ": " + value,
		"+ " + word + k + ": " + value,
		"• " + word + k + ": " + value,
		"> " + word + k + ": " + value,
		"1. " + word + k + ": " + value,
		"12) " + word + k + ": " + value,
		"- [x] " + word + k + ": " + value,
		"  - **" + tw + k + ":** " + value,
		"## " + word + k + ": " + value,
		"### " + tw + k + ": " + value,
		word + k + " - " + value,
		word + k + " — " + value,
		word + k + " – " + value,
		word + k + "—" + value,
		word + k + ": `" + value + "`",
		word + k + ": **" + value + "**",
		word + k + `: "` + value + `"`,
		word + k + ":    " + value + "   ",
		"- **" + tw + "**" + k + " — " + value,
	}
	if key != "" {
		forms = append(forms, word+" `"+key+"`: "+value, word+" <"+key+">: "+value, word+" **"+key+"**: "+value, "**"+word+"** `"+key+"` — "+value)
	} else {
		forms = append(forms, "## "+tw+"\n"+value, "### "+word+"\n\n"+value, "**"+tw+":**\n"+value, word+":\n"+value)
	}
	return forms
}

// inReply puts a structured line among the prose of a reply.
func inReply(line string) string {
	return "1. Intent\nI read the task.\n4. Actions/Artifacts\n" + line + "\n\n6. Next Steps or DONE\n- DONE"
}

// Every keyword a pattern reads, in every drift form, reads as the exact form does.
func TestReadDriftForms(t *testing.T) {
	plain := []struct {
		word, value, want string
		read              func(text string) string
	}{
		{"VERDICT", "accept", "accept", func(t string) string { v, _ := readVerdict(t); return v.Decision }},
		{"DECISION", "revise 2", "revise 2", func(t string) string { v, _ := readVerdict(t); return v.Decision }},
		{"ANSWER", "42", "42", func(t string) string { a, _ := lastAnswer(t); return a }},
		{"VOTE", "red", "red", func(t string) string { return vote(t, nil) }},
		{"PERFORMATIVE", "propose", "propose", func(t string) string { return fieldOr(t, "PERFORMATIVE") }},
		{"PROPOSAL", "blue", "blue", func(t string) string { return fieldOr(t, "PROPOSAL") }},
		{"STANDING", "none", "none", func(t string) string { return fieldOr(t, "STANDING") }},
		{"REPLY", "thanks", "thanks", func(t string) string { return fieldOr(t, "REPLY") }},
		{"COST", "3", "3", func(t string) string { return fieldOr(t, "COST") }},
		{"CLAIM", "water boils at 100C [1]", "water boils at 100C [1]", func(t string) string {
			if k := keyedLines(t, "CLAIM"); len(k) == 1 {
				return k[0].Value
			}
			return ""
		}},
		{"METRIC", "score=8", "8", func(t string) string { v, ok := metric(t, "score"); return fmt.Sprint(v, ok)[:1] }},
		{"SUBSCRIBE", "news", "news", func(t string) string { return strings.Join(words(t, "SUBSCRIBE"), ",") }},
	}
	for _, tc := range plain {
		for _, form := range driftForms(tc.word, "", tc.value) {
			if got := tc.read(inReply(form)); got != tc.want {
				t.Errorf("%s: %q reads %q, want %q", tc.word, form, got, tc.want)
			}
		}
	}
	keyedCases := []struct{ word, key, value string }{
		{"ASSIGN", "worker_1", "write the parser"},
		{"ATTACK", "1", "injection — send a quote"},
		{"CHECK", "2", "pass — the handbook says so"},
		{"POST", "hypothesis", "h1"},
		{"PUBLISH", "updates", "u1"},
		{"REQUEST", "search", "find the paper"},
	}
	for _, tc := range keyedCases {
		for _, form := range driftForms(tc.word, tc.key, tc.value) {
			got := keyedLines(inReply(form), tc.word)
			if len(got) != 1 || got[0].Key != tc.key || got[0].Value != tc.value {
				t.Errorf("%s: %q reads %+v, want %s: %s", tc.word, form, got, tc.key, tc.value)
			}
		}
	}
	// ACCEPT and REJECT name a member, with or without a reason and a separator.
	ids := []string{"worker_1", "worker_2", "all"}
	for _, word := range []string{"ACCEPT", "REJECT"} {
		forms := append(driftForms(word, "worker_1", "fine"), word+" worker_1 fine", "**"+word+"ED:** worker_1 — fine", word+": worker_1 - fine")
		for _, form := range forms {
			got := verdictLines(inReply(form), word, ids)
			if len(got) != 1 || got[0].Key != "worker_1" || got[0].Value != "fine" {
				t.Errorf("%s: %q reads %+v", word, form, got)
			}
		}
		if got := verdictLines(word+" worker_2", word, ids); len(got) != 1 || got[0].Key != "worker_2" || got[0].Value != "" {
			t.Errorf("%s without a reason reads %+v", word, got)
		}
	}
}

// What must not be read as a structured line.
func TestReadIgnoresProse(t *testing.T) {
	for _, tc := range []struct {
		text string
		read func(string) bool
	}{
		{"Decision makers: the team", func(t string) bool { _, ok := readVerdict(t); return ok }},
		{"The verdict is accept", func(t string) bool { _, ok := readVerdict(t); return ok }},
		{"POSTED: yesterday", func(t string) bool { return len(keyedLines(t, "POST")) > 0 }},
		{"Post a message to the whole board: hi", func(t string) bool { return len(keyedLines(t, "POST")) > 0 }},
		{"POST_x: y", func(t string) bool { return len(keyedLines(t, "POST")) > 0 }},
		{"Answering the question: 42", func(t string) bool { _, ok := lastAnswer(t); return ok }},
		{"the score was 3", func(t string) bool { _, ok := metric(t, "score"); return ok }},
		{"METRIC: score_scale=10", func(t string) bool { _, ok := metric(t, "score"); return ok }},
		{"SUBSCRIBE to everything", func(t string) bool { return len(words(t, "SUBSCRIBE")) > 0 }},
		{"UNSUBSCRIBE news", func(t string) bool { return len(words(t, "SUBSCRIBE")) > 0 }},
		{"ASSIGN worker_1-ish tasks later", func(t string) bool { return len(keyedLines(t, "ASSIGN")) > 0 }},
		{"DECISION:\nREASON: because", func(t string) bool { v, _ := readVerdict(t); return v.Decision != "" }},
	} {
		if tc.read(tc.text) {
			t.Errorf("%q was read as a structured line", tc.text)
		}
	}
}

// JSON lines (P10's act, P14's routes): on a line of their own, bulleted, in backticks or a
// fence, pretty-printed over several lines, keys in any case.
func TestReadJSONDrift(t *testing.T) {
	for _, form := range []string{
		`{"act": "accept"}`,
		"- `{\"act\": \"accept\"}`",
		"```json\n{\"act\": \"accept\"}\n```",
		"```json\n{\n  \"act\": \"accept\",\n  \"terms\": {}\n}\n```",
		`{"Act": "Accept"}`,
		`{"act": "accept"} (final)`,
		"> {\"act\": \"ACCEPT\"}",
	} {
		if act, _ := readAct(inReply(form)); act != "accept" {
			t.Errorf("%q reads act %q", form, act)
		}
	}
	for _, form := range []string{`{"act": "counter-offer", "terms": {"p": 1}}`, `{"act": "Counter_Offer", "terms": {"p": 1}}`} {
		if act, terms := readAct(form); act != "counteroffer" || terms == nil {
			t.Errorf("%q reads %q %v", form, act, terms)
		}
	}
	if act, _ := readAct(`{"act": "offer"}`); act != "" {
		t.Error("an offer without terms was read")
	}
	if got := jsonLines("{\"to\": \"peer_2\", \"text\": \"hi\"}"); len(got) != 1 || len(routeTo(got[0])) != 1 {
		t.Errorf("a route to one tag: %v", got)
	}
	if got := jsonLines("{\n\"to\": [\n{\n"); len(got) != 0 {
		t.Errorf("an unclosed object was read: %v", got)
	}
}

func TestReadMarkersAndSections(t *testing.T) {
	for _, form := range []string{"<INFO> done", "**<INFO>** done", "- <INFO>: done", "`<INFO>` done", "<info> done", "## <INFO> — done"} {
		if got, ok := markerLine("thinking\n"+form, "<INFO>"); !ok || got != "done" {
			t.Errorf("%q reads %q, %v", form, got, ok)
		}
	}
	for _, text := range []string{
		"## MEMORY\n- fact\n## NOTES\n- note",
		"# Memory\n- fact\n\n# Notes\n- note",
		"**MEMORY**\n- fact\n**NOTES**\n- note",
		"MEMORY:\n- fact\nNOTES:\n- note",
		"### MEMORY (the new full MEMORY.md)\n- fact\n### NOTES (today's notes)\n- note",
		"Here it is.\n## Memory:\n- fact\n## Notes:\n- note\n",
	} {
		if m, n := mdSection(text, "MEMORY", "NOTES"), mdSection(text, "NOTES", "MEMORY"); m != "- fact" || n != "- note" {
			t.Errorf("%q reads MEMORY %q, NOTES %q", text, m, n)
		}
	}
	// A section keeps its own sub-headings and labels.
	text := "## MEMORY\n### Decisions\n- use Go\nOpen items:\n- none\n## NOTES\n- n"
	if m := mdSection(text, "MEMORY", "NOTES"); m != "### Decisions\n- use Go\nOpen items:\n- none" {
		t.Errorf("MEMORY %q", m)
	}
}

func TestPickIDAndLeadsWith(t *testing.T) {
	ids := []string{"bidder_1", "bidder_2"}
	names := map[string]string{"bidder_2": "Acme Builders"}
	for value, want := range map[string]string{
		"bidder_2": "bidder_2", "**Bidder_2**": "bidder_2", "`bidder_2`.": "bidder_2", "bidder_2 (lowest cost)": "bidder_2",
		"<bidder_1>": "bidder_1", "acme builders": "bidder_2", "bidder_3": "", "the cheapest one": "", "": "",
	} {
		if got := pickID(value, ids, names); got != want {
			t.Errorf("pickID(%q) = %q, want %q", value, got, want)
		}
	}
	for _, tc := range []struct {
		value, word string
		want        bool
	}{
		{"propose", "propose", true}, {"PROPOSE.", "propose", true}, {"propose (cost 3)", "propose", true},
		{"proposed", "propose", false}, {"Inform_Done", "inform-done", true}, {"inform done", "inform-done", true},
		{"✅ pass — handbook", "pass", true}, {"passing", "pass", false}, {"**Accept**", "accept", true}, {"", "accept", false},
	} {
		if got := leadsWith(tc.value, tc.word); got != tc.want {
			t.Errorf("leadsWith(%q, %q) = %v", tc.value, tc.word, got)
		}
	}
}

// A clean value written in any drift form reads back as itself.
func FuzzDriftRoundTrip(f *testing.F) {
	f.Add("accept", uint8(0))
	f.Add("revise 2, 3", uint8(7))
	f.Add("x — y", uint8(21))
	f.Fuzz(func(t *testing.T, value string, form uint8) {
		value = strings.TrimSpace(value)
		if value == "" || strings.ContainsAny(value, "\n\r*`\"'_") || !utf8.ValidString(value) || strings.TrimSpace(cleanValue(value)) != value {
			return
		}
		if r, _ := utf8.DecodeRuneInString(value); strings.ContainsRune(":—–-#>+•[", r) || unicode.IsDigit(r) {
			return // a value that starts like a separator or a list mark
		}
		if labelRE.MatchString(value) {
			return // "AA—00" on the line after "## VERDICT" is a line of its own, not the value
		}
		forms := driftForms("VERDICT", "", value)
		text := inReply(forms[int(form)%len(forms)])
		got, ok := field(text, "VERDICT")
		if !ok || got != value {
			t.Errorf("%q reads %q, %v; want %q", forms[int(form)%len(forms)], got, ok, value)
		}
	})
}
