package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/internal/safeio"
	"github.com/acpprobe/acpprobe/report"
)

// MaxBaselineSize bounds a baseline file (a list of check ids with reasons: far less).
const MaxBaselineSize = 4 << 20

// LoadBaseline reads a baseline of known findings: either JSON
// ({"known":[{"id":"…","reason":"…"}]}) or text, one "id reason…" per line with # comments.
// Every entry needs a reason. The file is untrusted input: only a regular file of at most
// MaxBaselineSize bytes is read (a FIFO or /dev/zero is a clear error at once).
func LoadBaseline(path string) ([]report.BaselineEntry, error) {
	b, err := safeio.ReadFile(path, MaxBaselineSize)
	if err != nil {
		return nil, err
	}
	var entries []report.BaselineEntry
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var doc struct {
			Known []report.BaselineEntry `json:"known"`
		}
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("%s: %v (want {\"known\":[{\"id\":…,\"reason\":…}]})", path, err)
		}
		entries = doc.Known
	} else {
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			id, reason, _ := strings.Cut(line, " ")
			entries = append(entries, report.BaselineEntry{ID: id, Reason: strings.TrimSpace(reason)})
			if entries[len(entries)-1].Reason == "" {
				return nil, fmt.Errorf("%s:%d: %s has no reason (write: id reason…)", path, i+1, id)
			}
		}
	}
	for _, e := range entries {
		if _, ok := Lookup(e.ID); !ok {
			return nil, fmt.Errorf("%s: %q is not a check id (see acpprobe check --list)", path, e.ID)
		}
		if strings.TrimSpace(e.Reason) == "" {
			return nil, fmt.Errorf("%s: %s has no reason", path, e.ID)
		}
	}
	return entries, nil
}

// ParseTier reads a --fail-on value (mandatory, capability, advisory, info; any case).
func ParseTier(s string) (report.Tier, error) {
	for _, t := range report.Tiers {
		if strings.EqualFold(s, string(t)) {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown tier %q (want mandatory, capability, advisory or info)", s)
}

// Judge marks the findings the baseline knows, counts the rest by tier, and decides whether
// any of them is at or above failOn. It stores the verdict in r.Verdict.
func Judge(r *report.Result, failOn report.Tier, baseline []report.BaselineEntry, baselinePath string) *report.Verdict {
	v := &report.Verdict{FailOn: failOn, Counts: map[report.Tier]int{}, Baseline: baselinePath, Stale: []report.BaselineEntry{}}
	for _, t := range report.Tiers {
		v.Counts[t] = 0
	}
	reasons := map[string]string{}
	for _, e := range baseline {
		reasons[e.ID] = e.Reason
	}
	seen := map[string]bool{}
	for i := range r.Findings {
		f := &r.Findings[i]
		seen[f.ID] = true
		if reason, ok := reasons[f.ID]; ok {
			f.Known, f.KnownReason = true, reason
			v.Known++
			continue
		}
		v.Counts[f.Tier]++
		if f.Tier.Rank() <= failOn.Rank() {
			v.Failed = true
		}
	}
	for _, e := range baseline {
		if !seen[e.ID] {
			v.Stale = append(v.Stale, e)
		}
	}
	r.Verdict = v
	return v
}
