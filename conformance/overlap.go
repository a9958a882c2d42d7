package conformance

import (
	"encoding/json"

	"github.com/acpprobe/acpprobe/report"
)

// overlaps are the checks one departure can break together on the same line: an error answer
// without an id to a notification is both an answered notification and a response without an
// id. One departure gives one finding: the specific one stays, and the general finding on the
// same line becomes its related evidence.
var overlaps = []struct{ specific, general *Check }{
	{protocolNotificationAnswered, envelopeInvalid},
}

// related is a finding folded into a more specific one on the same line.
type related struct {
	ID      string      `json:"id"`
	Tier    report.Tier `json:"tier"`
	Pointer string      `json:"pointer"`
	Message string      `json:"message"`
}

// mergeOverlaps folds each general finding of an overlap into the specific finding on the same
// line, as {"related":[…]} in its evidence (next to its own evidence, under "evidence", when
// that is not an object).
func mergeOverlaps(all []report.Finding) []report.Finding {
	type place struct {
		id  string
		seq int64
	}
	generalOf := map[string][]string{}
	for _, o := range overlaps {
		generalOf[o.specific.ID] = append(generalOf[o.specific.ID], o.general.ID)
	}
	folded := map[place][]related{}
	for _, f := range all {
		for _, g := range generalOf[f.ID] {
			folded[place{g, f.Seq}] = nil
		}
	}
	if len(folded) == 0 {
		return all
	}
	kept := all[:0:0]
	for _, f := range all {
		p := place{f.ID, f.Seq}
		if _, ok := folded[p]; ok {
			folded[p] = append(folded[p], related{f.ID, f.Tier, f.Pointer, f.Message})
			continue
		}
		kept = append(kept, f)
	}
	for i := range kept {
		f := &kept[i]
		var rel []related
		for _, g := range generalOf[f.ID] {
			rel = append(rel, folded[place{g, f.Seq}]...)
		}
		if len(rel) > 0 {
			f.Evidence = withRelated(f.Evidence, rel)
		}
	}
	return kept
}

func withRelated(evidence json.RawMessage, rel []related) json.RawMessage {
	obj := map[string]any{}
	if len(evidence) > 0 && json.Unmarshal(evidence, &obj) != nil {
		obj = map[string]any{"evidence": evidence}
	}
	obj["related"] = rel
	b, _ := json.Marshal(obj)
	return b
}
