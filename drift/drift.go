// Package drift compares two probe results, or two capability matrices, and says what changed
// in words a person reads at a glance: capabilities, auth methods, modes, config options and
// their values, models, method support, vendor extensions and findings. Volatile fields —
// times, process ids, session ids, the raw responses — and prose (notes, titles) are ignored.
package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/acpprobe/acpprobe/internal/safeio"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/report"
)

// Change is one difference.
type Change struct {
	// Agent is the matrix row the change is in ("" when two results are compared).
	Agent string `json:"agent,omitempty"`
	// Kind is added, removed or changed.
	Kind string `json:"kind"`
	// Path locates the value: capabilities.sessionCapabilities.fork, authMethods[chatgpt],
	// methods[session/load].support, configOptions[model].options[opus].
	Path string          `json:"path"`
	Old  json.RawMessage `json:"old,omitempty"`
	New  json.RawMessage `json:"new,omitempty"`
	// Text is the change in a sentence.
	Text string `json:"text"`
}

// Kinds of change.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Volatile are the paths ignored by default: they change from run to run.
var Volatile = []string{
	"schema", "agent.probedAt", "agent.durationMs", "agent.pid", "agent.cwd", "timings", "raw", "stderrTail", "stderrBytes",
	// How the process ended races with the teardown's signal (a probe signals at once); what
	// it says of the agent is in the findings (protocol.stdin-exit, leftover-processes).
	"exit", "methods[*].ms", "methods[*].message", "findings[*].seq", "promptShapes.probes[*].seq",
	"extensions.metaKeys[*].where", "extensions.methods[*].where", "extensions.unknownVariants[*].where",
	"extensions.metaKeys[*].count", "extensions.methods[*].count", "extensions.unknownVariants[*].count",
	"error.stderr", "notifications", "verdict",
	// Which processes survived is in the findings' messages (by command); their pids and
	// argv (temporary paths), in the evidence, change from run to run.
	"findings[*].evidence",
	// A turn's prompts carry their own times and lines; what they showed is in the turn's
	// outcome and facts, compared.
	"turns[*].runs", "turns[*].cancel.withinMs", "turns[*].cancel.seq", "turns[*].permission.askedSeq",
	"turns[*].permission[*].seq", "turns[*].permission[*].askedSeq", // the permission runs, one per mode
	"turns[*].shapes[*].seq", "turns[*].models[*].seq",
	// The sessions scenario's session ids, sandbox paths and lines change from run to run;
	// what each part showed (replayed, listed, counts, grew, refused) is compared.
	"turns[*].sessions.sessionId", "turns[*].sessions.cwd", "turns[*].sessions.list.cwd", "turns[*].sessions.fork.newId",
	"turns[*].sessions.list.seq", "turns[*].sessions.list.answerSeq", "turns[*].sessions.load.seq", "turns[*].sessions.load.answerSeq",
	"turns[*].sessions.fork.seq", "turns[*].sessions.fork.answerSeq", "turns[*].sessions.fork.load.seq", "turns[*].sessions.fork.load.answerSeq",
	"turns[*].sessions.close.close.seq", "turns[*].sessions.close.close.answerSeq", "turns[*].sessions.close.prompt.seq",
	"turns[*].sessions.close.prompt.answerSeq", "turns[*].sessions.resume.seq", "turns[*].sessions.resume.answerSeq",
	// The files an agent writes carry session ids and grow from run to run, processes have
	// new pids, launches new times and a kept sandbox its own directory; what drifts is the
	// level, the launch count, the network names and the auth oracle's answer.
	"sideEffects.files", "sideEffects.processes", "sideEffects.browser.launches", "sideEffects.isolation.kept",
	"authAB.evidence", "authAB.identities",
	// The route points the agent at an emulator on a fresh loopback port each run: the values
	// of the variables it set and the gateway's base URL carry it. The route's kind, profile,
	// the variables' names and what was verified are compared.
	"route.env[*].value", "route.gateway",
	// The lines of the zero-_meta contract's steps: which line answered depends on what the
	// agent pushed in between. Each step's method and outcome is compared.
	"zeroMeta.steps[*].seq", "zeroMeta.steps[*].answerSeq",
}

// Prose are the paths ignored by default because they hold words, not facts: notes that say in
// a sentence what other fields say (the isolation's and the network's note, the coverage's),
// a check's title and the reason a baseline gives. acpprobe rewords them from version to
// version; what they describe is compared in its own fields (the level, observed, the folded
// counts, the finding itself).
var Prose = []string{
	"sideEffects.isolation.note", "sideEffects.network.note", "coverage.note",
	"findings[*].title", "findings[*].knownReason",
}

// Doc is a loaded probe result or matrix.
type Doc struct {
	Result *report.Result
	Matrix *matrix.Matrix
}

// Load reads a probe result (acpprobe probe --json) or a matrix (acpprobe matrix --format
// json) from a file.
func Load(path string) (Doc, error) {
	b, err := safeio.ReadFile(path, MaxFileSize)
	if err != nil {
		return Doc{}, err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return Doc{}, fmt.Errorf("%s: not JSON: %v", path, err)
	}
	switch head.Schema {
	case report.ResultSchema:
		var r report.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return Doc{}, fmt.Errorf("%s: %v", path, err)
		}
		return Doc{Result: &r}, nil
	case matrix.Schema:
		var m matrix.Matrix
		if err := json.Unmarshal(b, &m); err != nil {
			return Doc{}, fmt.Errorf("%s: %v", path, err)
		}
		return Doc{Matrix: &m}, nil
	}
	return Doc{}, fmt.Errorf("%s: neither a probe result (%s) nor a matrix (%s): schema %q", path, report.ResultSchema, matrix.Schema, head.Schema)
}

// Compare lists the changes from old to new. Both must be results or both matrices; a matrix
// compares agent by agent (an agent only in one of them is added or removed). ignore adds
// paths to Volatile and Prose (a prefix matches everything under it; [*] matches any key).
func Compare(old, new Doc, ignore []string) ([]Change, error) {
	skip := slices.Concat(Volatile, Prose, ignore)
	switch {
	case old.Result != nil && new.Result != nil:
		return results("", old.Result, new.Result, skip), nil
	case old.Matrix != nil && new.Matrix != nil:
		return matrices(old.Matrix, new.Matrix, skip), nil
	}
	return nil, fmt.Errorf("cannot compare a probe result with a matrix")
}

func matrices(old, new *matrix.Matrix, skip []string) []Change {
	oldRows := map[string]matrix.Row{}
	for _, r := range old.Rows {
		oldRows[r.ID] = r
	}
	var out []Change
	seen := map[string]bool{}
	for _, nr := range new.Rows {
		seen[nr.ID] = true
		or, ok := oldRows[nr.ID]
		switch {
		case !ok:
			out = append(out, Change{Agent: nr.ID, Kind: Added, Path: "", Text: fmt.Sprintf("%s: new agent in the matrix", nr.ID)})
		case or.Problem != nr.Problem:
			out = append(out, Change{Agent: nr.ID, Kind: Changed, Path: "problem", Old: raw(or.Problem), New: raw(nr.Problem),
				Text: fmt.Sprintf("%s: could not run: %q → %q", nr.ID, or.Problem, nr.Problem)})
		case or.Result != nil && nr.Result != nil:
			out = append(out, results(nr.ID, or.Result, nr.Result, skip)...)
		}
	}
	for _, or := range old.Rows {
		if !seen[or.ID] {
			out = append(out, Change{Agent: or.ID, Kind: Removed, Text: fmt.Sprintf("%s: no longer in the matrix", or.ID)})
		}
	}
	return out
}

func results(agent string, old, new *report.Result, skip []string) []Change {
	d := &differ{agent: agent, skip: skip}
	d.value("", tree(old), tree(new))
	return d.out
}

func tree(r *report.Result) any {
	b, _ := json.Marshal(r)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

type differ struct {
	agent string
	skip  []string
	out   []Change
}

// identity names the key that identifies the objects of a list, for lists that have one.
var identity = []string{"id", "key", "name", "value", "modelId", "field", "scenario", "type", "vendor", "transport"}

func (d *differ) value(path string, a, b any) {
	if d.skipped(path) {
		return
	}
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			d.object(path, av, bv)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			d.list(path, av, bv)
			return
		}
	}
	if !equal(a, b) {
		d.add(Changed, path, a, b)
	}
}

func (d *differ) object(path string, a, b map[string]any) {
	for _, k := range unionKeys(a, b) {
		d.member(join(path, k), a, b, k)
	}
}

// member compares the entry k of two keyed collections at path p.
func (d *differ) member(p string, a, b map[string]any, k string) {
	av, inA := a[k]
	bv, inB := b[k]
	switch {
	case d.skipped(p):
	case inA && !inB:
		d.add(Removed, p, av, nil)
	case !inA && inB:
		d.add(Added, p, nil, bv)
	default:
		d.value(p, av, bv)
	}
}

// list compares lists of identified objects element by element (by id, key, name…), and
// other lists as sets of values.
func (d *differ) list(path string, a, b []any) {
	if key := listKey(a, b); key != "" {
		am, bm := byKey(a, key), byKey(b, key)
		for _, k := range unionKeys(am, bm) {
			d.member(path+"["+k+"]", am, bm, k)
		}
		return
	}
	as, bs := valueSet(d.unskipped(path+"[*]", a)), valueSet(d.unskipped(path+"[*]", b))
	for _, k := range unionKeys(as, bs) {
		_, inA := as[k]
		_, inB := bs[k]
		switch {
		case inA && !inB:
			d.add(Removed, path, as[k], nil)
		case !inA && inB:
			d.add(Added, path, nil, bs[k])
		}
	}
}

func listKey(a, b []any) string {
	all := append(append([]any{}, a...), b...)
	if len(all) == 0 {
		return ""
	}
	for _, k := range identity {
		ok := true
		for _, el := range all {
			m, isMap := el.(map[string]any)
			if !isMap {
				return ""
			}
			if _, has := m[k].(string); !has {
				ok = false
				break
			}
		}
		if ok {
			return k
		}
	}
	return ""
}

func byKey(list []any, key string) map[string]any {
	out := map[string]any{}
	for _, el := range list {
		m := el.(map[string]any)
		k := m[key].(string)
		if key == "id" && m["pointer"] != nil { // findings: one id may occur at several places
			k += "@" + fmt.Sprint(m["pointer"])
		}
		out[k] = el
	}
	return out
}

// unskipped is a list of values compared as a set, without the members of its objects that are
// skipped (path is the elements' path, "…[*]"): the zero-_meta steps are the same steps when
// only their lines differ.
func (d *differ) unskipped(path string, list []any) []any {
	out := make([]any, len(list))
	for i, el := range list {
		m, ok := el.(map[string]any)
		if !ok {
			out[i] = el
			continue
		}
		kept := map[string]any{}
		for k, v := range m {
			if !d.skipped(join(path, k)) {
				kept[k] = v
			}
		}
		out[i] = kept
	}
	return out
}

func valueSet(list []any) map[string]any {
	out := map[string]any{}
	for _, el := range list {
		b, _ := json.Marshal(el)
		out[string(b)] = el
	}
	return out
}

func (d *differ) add(kind, path string, old, new any) {
	c := Change{Agent: d.agent, Kind: kind, Path: path}
	if old != nil {
		c.Old = raw(old)
	}
	if new != nil {
		c.New = raw(new)
	}
	prefix := ""
	if d.agent != "" {
		prefix = d.agent + ": "
	}
	where := path
	if where == "" {
		where = "(result)"
	}
	switch kind {
	case Added:
		c.Text = fmt.Sprintf("%s%s: added %s", prefix, where, short(new))
	case Removed:
		c.Text = fmt.Sprintf("%s%s: removed %s", prefix, where, short(old))
	default:
		c.Text = fmt.Sprintf("%s%s: %s → %s", prefix, where, short(old), short(new))
	}
	d.out = append(d.out, c)
}

// skipped reports whether path is ignored: a pattern matches the path or a prefix of it, with
// [*] matching any list key.
func (d *differ) skipped(path string) bool {
	for _, pat := range d.skip {
		if matchPath(pat, path) {
			return true
		}
	}
	return false
}

func matchPath(pat, path string) bool {
	for pat != "" {
		if path == "" {
			return false
		}
		if strings.HasPrefix(pat, "[*]") {
			if !strings.HasPrefix(path, "[") {
				return false
			}
			end := strings.Index(path, "]")
			if end < 0 {
				return false
			}
			pat, path = pat[3:], path[end+1:]
			continue
		}
		if pat[0] != path[0] {
			return false
		}
		pat, path = pat[1:], path[1:]
	}
	return path == "" || path[0] == '.' || path[0] == '['
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	if strings.ContainsAny(key, "./[]") { // methods are keyed by names like session/load
		return path + "[" + key + "]"
	}
	return path + "." + key
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var keys []string
	for k := range a {
		seen[k] = true
		keys = append(keys, k)
	}
	for k := range b {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func equal(a, b any) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return bytes.Equal(ab, bb)
}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// short renders a value for a sentence: scalars as is, objects by their identity, others cut.
func short(v any) string {
	if m, ok := v.(map[string]any); ok {
		for _, k := range identity {
			if s, ok := m[k].(string); ok {
				return s
			}
		}
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 80 {
		s = s[:79] + "…"
	}
	return s
}

// MaxFileSize bounds a result or matrix file that diff reads.
const MaxFileSize = 256 << 20
