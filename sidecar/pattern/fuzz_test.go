package pattern

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/patterns"
)

// FuzzParseTemplate: no input panics the template parser, and a template it accepts can be
// instantiated into a subgraph that keeps every invariant.
func FuzzParseTemplate(f *testing.F) {
	names, _ := fs.Glob(patterns.FS(), "*.json")
	for _, n := range names {
		data, _ := fs.ReadFile(patterns.FS(), n)
		f.Add(data)
	}
	f.Add([]byte(`{"id":"P05","roles":[{"role":"a","count":-1}],"edges":[{"source":"a","target":"a"}]}`))
	f.Add([]byte(`{"defaultTermination":{"any":[{"all":[]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tpl, err := ParseTemplate(data)
		if err != nil {
			return
		}
		if err := CheckTemplate(tpl); err != nil {
			t.Fatalf("ParseTemplate accepted a template CheckTemplate rejects: %v", err)
		}
		p := Pattern{ID: tpl.ID, PatternID: tpl.PatternID, Name: tpl.Name, Topology: tpl.Topology,
			Roles: tpl.Roles, DefaultTermination: tpl.DefaultTermination, DefaultParams: tpl.Params, Template: *tpl}
		existing := map[string]bool{tpl.PatternID: true}
		for _, r := range tpl.Roles {
			existing[r.Role] = true
			existing[r.Role+"_1"] = true
		}
		checkSubgraph(t, p, Instantiate(p, InstantiateOptions{ExistingIDs: existing}), existing)
	})
}

// FuzzInstantiate: any taken ids, prefix and counts give fresh, unique ids and a sound subgraph.
func FuzzInstantiate(f *testing.F) {
	f.Add(uint8(4), "debater_1,judge,i1,i2_e1", "", uint8(3))
	f.Add(uint8(14), "root,sub_manager_1,worker_2,worker_2_2", "x_", uint8(7))
	f.Add(uint8(6), "", "voter", uint8(0))
	f.Fuzz(func(t *testing.T, which uint8, taken, prefix string, count uint8) {
		all := All()
		p := all[int(which)%len(all)]
		existing := map[string]bool{}
		for _, id := range strings.Split(taken, ",") {
			existing[id] = true
		}
		counts := map[string]int{}
		for i, r := range p.Roles {
			counts[r.Role] = (int(count) + i) % 8
		}
		sg := Instantiate(p, InstantiateOptions{ExistingIDs: existing, Prefix: prefix, Counts: counts})
		checkSubgraph(t, p, sg, existing)
	})
}
