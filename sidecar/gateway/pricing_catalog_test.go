package gateway

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// The price table has every model of the pinned Claude Code's own model catalog (baked into
// its binary: pricing tiers, then models naming a tier), at the catalog's prices: its default
// model is then reserved and charged as it is billed, not at the dearest price. A Claude Code
// upgrade that brings a model the table lacks fails here.
func TestPricingHasClaudeCodesCatalog(t *testing.T) {
	exe := modelserver.Claude.Binary(t)
	catalog := bakedCatalog(t, exe)
	end := bytes.Index(catalog, []byte("},models:["))
	if end < 0 {
		t.Fatalf("%s: no models after the catalog's pricing tiers", exe)
	}
	tiersText, models := catalog[:end], catalog[end:]
	if e := bytes.Index(models, []byte("}]")); e > 0 {
		models = models[:e]
	}
	tiers := catalogTiers(t, tiersText)
	table := DefaultPricing()
	n := 0
	for _, m := range regexp.MustCompile(`\{id:"([a-z0-9.-]+)",family:"[a-z]+"[^{]*?(?:\{[^{}]*\}[^{]*?)*?pricing:"([a-z0-9_]+)"`).FindAllSubmatch(models, -1) {
		id, tier := string(m[1]), string(m[2])
		want, ok := tiers[tier]
		if !ok {
			t.Errorf("%s: tier %s not read", id, tier)
			continue
		}
		got, priced, _ := table.price(Anthropic, id)
		if !priced || got.Input != want.Input || got.Output != want.Output || got.CachedInput != want.CachedInput ||
			got.CacheWrite != want.CacheWrite || got.hourWrite() != want.CacheWrite1h || (want.LongContext != nil && (got.LongContext == nil || *got.LongContext != *want.LongContext)) {
			t.Errorf("%s (priced: %v): %+v, the catalog's %s is %+v", id, priced, got, tier, want)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("read %d models of the catalog", n)
	}
}

// bakedCatalog is the text of the model catalog baked into the binary exe, from its
// "pricing_tiers:{" on (64 KB), found a piece at a time (the binary is some 400 MB); the
// pieces overlap by the mark's length, so a mark across two is found.
func bakedCatalog(t *testing.T, exe string) []byte {
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const piece, keep = 8 << 20, 64 << 10
	mark := []byte("pricing_tiers:{")
	buf := make([]byte, piece+len(mark))
	for off := int64(0); ; off += piece {
		n, err := f.ReadAt(buf, off)
		if i := bytes.Index(buf[:n], mark); i >= 0 {
			catalog := make([]byte, keep)
			m, _ := f.ReadAt(catalog, off+int64(i))
			return catalog[:m]
		}
		if err != nil {
			t.Fatalf("%s: no baked model catalog (pricing_tiers) found: %v", exe, err)
		}
	}
}

// catalogTiers reads the catalog's pricing tiers: name:{input:…,output:…,cache_write_5m:…,
// cache_write_1h:…,cache_read:…[,long_prompt:{above_prompt_tokens:…,…}]}.
func catalogTiers(t *testing.T, text []byte) map[string]Price {
	num := `([0-9.e]+)`
	prices := `input:` + num + `,output:` + num + `,cache_write_5m:` + num + `,cache_write_1h:` + num + `,cache_read:` + num
	re := regexp.MustCompile(`([a-z0-9_]+):\{` + prices + `(?:,web_search:[0-9.e]+)?(?:,long_prompt:\{above_prompt_tokens:` + num + `,` + prices + `\})?`)
	f := func(b []byte) float64 {
		x, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			t.Fatalf("a catalog price %q: %v", b, err)
		}
		return x
	}
	out := map[string]Price{}
	for _, m := range re.FindAllSubmatch(text, -1) {
		p := Price{Input: f(m[2]), Output: f(m[3]), CacheWrite: f(m[4]), CacheWrite1h: f(m[5]), CachedInput: f(m[6])}
		if len(m[7]) > 0 {
			p.LongContext = &LongPrice{Above: int64(f(m[7])), Input: f(m[8]), Output: f(m[9]), CacheWrite: f(m[10]), CacheWrite1h: f(m[11]), CachedInput: f(m[12])}
		}
		out[string(m[1])] = p
	}
	return out
}
