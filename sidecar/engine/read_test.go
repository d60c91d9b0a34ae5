package engine

import (
	"reflect"
	"testing"
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
		{"score=3", "score", 0, false},
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
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range []string{"POST", "CHECK", "CLAIM", "ASSIGN", "PUBLISH", "REQUEST", "ATTACK"} {
			for _, k := range keyedLines(s, w) {
				if len(k.Key)+len(k.Value) > len(s) {
					t.Fatalf("%s line longer than the text: %+v", w, k)
				}
			}
		}
		metric(s, "score")
		jsonLines(s)
		words(s, "SUBSCRIBE")
		readVerdict(s)
		answer(s)
		lastAnswer(s)
		markerLine(s, "<INFO>")
		mdSection(s, "MEMORY")
		citations(s)
	})
}
