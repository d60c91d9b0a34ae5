package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// A command agent reports what it spent (the model calls it made) with a line on stdout:
//
//	USAGE: {"inputTokens": 1200, "outputTokens": 340, "costUsd": 0.0042}
//
// Each line adds to the turn's usage, so an agent that calls a model several times prints one
// line per call. inputTokens (every input token, cache reads and writes included) and
// outputTokens are whole numbers ≥ 0; costUsd (≥ 0) is optional: a turn whose lines carry
// none has an unknown cost. At least one of the three must be there. A count above what any
// model call could use (tally.AbsurdTokens, tally.AbsurdUSD) is refused like a negative one,
// and the turn's totals stop short of overflowing. The line is not part of
// the reply. A USAGE: line that does not parse is kept as text, with a warning.
const usagePrefix = "USAGE:"

// usageReport is one USAGE: line.
type usageReport struct {
	InputTokens  *int64   `json:"inputTokens"`
	OutputTokens *int64   `json:"outputTokens"`
	CostUSD      *float64 `json:"costUsd"`
}

// parseUsageLine reads a USAGE: line. ok is false when the line is not one (no prefix); err
// says what is wrong with one that is.
func parseUsageLine(l []byte) (u Usage, cost *float64, ok bool, err error) {
	t := bytes.TrimSpace(l)
	if !bytes.HasPrefix(t, []byte(usagePrefix)) {
		return Usage{}, nil, false, nil
	}
	body := bytes.TrimSpace(t[len(usagePrefix):])
	if !bytes.HasPrefix(body, []byte("{")) {
		return Usage{}, nil, false, nil // "USAGE: foo [options]" is a program's help text
	}
	var r usageReport
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Usage{}, nil, true, fmt.Errorf("USAGE line ignored: %v (write e.g. USAGE: {\"inputTokens\": 1200, \"outputTokens\": 340, \"costUsd\": 0.0042})", err)
	}
	if r.InputTokens == nil && r.OutputTokens == nil && r.CostUSD == nil {
		return Usage{}, nil, true, fmt.Errorf("USAGE line ignored: it names none of inputTokens, outputTokens, costUsd")
	}
	var counts []int64
	for _, v := range []struct {
		name string
		n    *int64
	}{{"inputTokens", r.InputTokens}, {"outputTokens", r.OutputTokens}} {
		if v.n == nil {
			continue
		}
		if *v.n < 0 || *v.n > tally.AbsurdTokens {
			return Usage{}, nil, true, fmt.Errorf("USAGE line ignored: %s is %d; token counts are whole numbers ≥ 0, at most %d a line", v.name, *v.n, tally.AbsurdTokens)
		}
		counts = append(counts, *v.n)
	}
	if why := tally.Report(counts, r.CostUSD); why != "" {
		return Usage{}, nil, true, fmt.Errorf("USAGE line ignored: %s; costUsd is a number of US dollars ≥ 0", why)
	}
	get := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	u = Usage{InputTokens: get(r.InputTokens), OutputTokens: get(r.OutputTokens)}
	return u, r.CostUSD, true, nil
}

// Tokens is the turn's total of tokens as budgets count them: input and output, cache reads
// and writes included. Claude reports cache reads and writes apart from its input tokens, and
// its decoder adds them into InputTokens (CachedInputTokens and CacheCreationTokens say how
// many of them were); codex and gemini count cached tokens inside their input tokens, and so
// does a USAGE: line.
func (u Usage) Tokens(backend string) int64 {
	if backend == BackendClaude {
		return tally.Add(u.InputTokens, u.OutputTokens)
	}
	return tally.Sum(u.InputTokens, u.OutputTokens, u.CacheCreationTokens)
}
