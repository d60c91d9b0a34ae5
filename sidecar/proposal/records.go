package proposal

// An apply's records: the ledger's copies of every version it changes, its journal and its
// ledger entry, made before anything is written. Their readers have caps (caps.go), so the
// check refuses an apply whose records would be over them (recordsFit), and the apply measures
// the records it writes once more before the first write (makeRecords).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

var nl = []byte{'\n'}

// records are what an apply writes besides the workspace.
type records struct {
	versions *versionSet
	journal  []byte // the journal, as written
	entry    []byte // the ledger entry, as written; nil: none
}

// makeRecords builds pl's records: the versions, the entry (rec.entry filled), the temporary
// names each file's versions take, and the journal. res.Ledger is the entry's id.
func makeRecords(d *dirs, pl *plan, rec *record, res *Result) (*records, error) {
	rc := &records{versions: planVersions(pl)}
	if rec.entry != nil {
		rec.entry.Merged = len(res.Merged) > 0
		buildEntry(rec.entry, rc.versions)
		res.Ledger = rec.entry.ID
		b, err := json.MarshalIndent(rec.entry, "", "  ")
		if err != nil {
			return nil, err
		}
		rc.entry = append(b, '\n')
	}
	nameTemps(pl)
	j := newJournal(d, pl, rc.versions, rec.what, rec.entry)
	if rec.finish != nil {
		j.Finish = rec.finish(res)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return nil, err
	}
	rc.journal = append(b, '\n')
	if int64(len(rc.entry)) > maxRecordBytes {
		return nil, fmt.Errorf("its ledger entry would be %s, over the %s the ledger reads back: it could not be reverted; apply it in parts (a selection of files)", byteSize(int64(len(rc.entry))), byteSize(maxRecordBytes))
	}
	if int64(len(rc.journal)) > maxRecordBytes {
		return nil, fmt.Errorf("its journal would be %s, over the %s recovery reads back: it could not be recovered after a crash; apply it in parts (a selection of files)", byteSize(int64(len(rc.journal))), byteSize(maxRecordBytes))
	}
	return rc, nil
}

// nameTemps gives every new version its temporary name beside its file, and every old version
// the name under .agentcanvas/tmp it is kept at until the apply stands; the journal names them
// all before the first is made.
func nameTemps(pl *plan) {
	for i := range pl.writes {
		pl.writes[i].tmp = tempName(pl.writes[i].path)
		if pl.writes[i].old != nil {
			pl.writes[i].aside = tempName(tmpDir + "/x")
		}
	}
	for i := range pl.deletes {
		pl.deletes[i].aside = tempName(tmpDir + "/x")
	}
}

// recordsFit refuses, at check time, an apply whose ledger entry or journal would be over
// what their readers take, or whose copies would overflow the ledger's object index. The
// sizes are bounded cheaply first (a path's entry grows with its changed ranges, at most one
// more than the lines either version has); only an apply near a cap has its records built to
// be measured.
func recordsFit(root *os.Root, d *dirs, pl *plan, rec *record, res *Result) []Problem {
	var probs []Problem
	if fi, err := root.Stat(packIndex); err == nil {
		if grow := int64(2 * (len(pl.writes) + len(pl.deletes)) * len("<40 hex> 18446744073709551615 18446744073709551615\n")); fi.Size()+grow > maxPackIndexBytes {
			probs = append(probs, Problem{Reason: fmt.Sprintf("the ledger's object index (%s) is full: its copies of the versions could not be read back", packIndex)})
		}
	}
	if entry, journal := recordBounds(pl); entry <= maxRecordBytes && journal <= maxRecordBytes {
		return probs
	}
	e := rec.entry
	if e != nil {
		cp := *e
		e = &cp
	}
	saved := res.Ledger
	_, err := makeRecords(d, clonePlanNames(pl), &record{what: rec.what, entry: e, finish: rec.finish}, res)
	res.Ledger = saved
	if err != nil {
		probs = append(probs, Problem{Reason: "refused at check time: " + err.Error()})
	}
	return probs
}

// recordBounds bounds the sizes of pl's ledger entry and journal.
func recordBounds(pl *plan) (entry, journal int64) {
	entry, journal = 4096, 4096
	add := func(p string, ranges int64) {
		per := 1024 + 8*int64(len(p)) + 160*(ranges+1)
		entry += per
		journal += per + 1024 + 16*int64(len(p))
	}
	for _, w := range pl.writes {
		ranges := int64(1) // an added file is one range
		if w.old != nil {
			ranges = int64(min(bytes.Count(w.old.data, nl), bytes.Count(w.data, nl))) + 1
		}
		add(w.path, ranges)
	}
	for _, d := range pl.deletes {
		add(d.path, 1)
	}
	return entry, journal
}

// clonePlanNames is pl with its own writes and deletions, so that naming their temporary files
// to measure the records leaves pl's names to the apply.
func clonePlanNames(pl *plan) *plan {
	cp := *pl
	cp.writes = append([]write(nil), pl.writes...)
	cp.deletes = append([]deletion(nil), pl.deletes...)
	return &cp
}
