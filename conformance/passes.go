package conformance

import (
	"encoding/json"
	"iter"
	"sort"
	"strconv"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// scope is a kind of recorded session. A pass applies to one or more scopes; Evaluate runs only
// the passes that apply to the record's scope.
type scope uint8

const (
	// driven: a session acpprobe drove (probe, check, matrix), judged live or offline from its
	// transcript. Its record has the probe's own exchanges: method detection, active steps,
	// the --deep connection.
	driven scope = 1 << iota
	// tapped: a session between an editor and an agent, recorded by acpprobe tap. The client
	// is the editor: there is no method detection and there are no active steps.
	tapped
	anyScope = driven | tapped
)

// scopeOf is the scope of a record.
func scopeOf(x *record.Index) scope {
	if x.IsTap() {
		return tapped
	}
	return driven
}

// A pass is one group of checks over a record: the checks it reports, the scopes it applies
// to, and how it judges the inputs (computed once by Evaluate, read only). A pass returns its
// findings through the collector it is given and shares nothing else with other passes.
type pass struct {
	name   string
	scope  scope
	checks []*Check
	// cost says how the pass's cost grows with the record. A pass that reads facts of a fixed
	// size (fixed) always runs. One that reads every frame (perFrame, or perFrameSlow when each
	// frame costs much more, as schema validation does) reads them through inputs.scan, which
	// stops when the evaluation's context ends, and does not start after it. Evaluate runs the
	// passes in the order of their cost, so that a deadline leaves the fewest unjudged.
	cost cost
	run  func(in *inputs, out *findings)
}

// cost is how a pass's cost grows with the record.
type cost uint8

const (
	fixed cost = iota
	perFrame
	perFrameSlow
)

// runOrder is the order Evaluate runs the passes in: by cost, the declaration order among
// equals. (Findings keep the declaration order among equals whatever the run order.)
var runOrder = func() []int {
	order := make([]int, len(passes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return passes[order[a]].cost < passes[order[b]].cost })
	return order
}()

// passes are declared in this order; findings keep it among equals of the final sort (tier,
// then exchange, then seq). They run in runOrder.
var passes = []*pass{
	&framingPass,
	&envelopePass,
	&schemaPass,
	&protocolPass,
	&activePass,
	&promptPass,
	&turnsPass,
	&capabilityPass,
	&statePass,
	&deepPass,
	&extensionsPass,
	&clientPass,
	&sideEffectsPass,
}

// maxPerCheck bounds the findings of one check; the last one says how many more there were.
const maxPerCheck = 10

// findings collects the findings of one pass (each check belongs to exactly one pass, so the
// per-check bound holds across the whole evaluation).
type findings struct {
	list   []report.Finding
	counts map[string]int
	// cut is set when the deadline stopped the pass before it judged the whole record.
	cut bool
}

// checkEvery is how many frames a scan yields between two looks at the deadline.
const checkEvery = 16

// scan yields the frames judged one by one to a pass (derive.Facts.Judged: the main
// connection's, then those of the other connections acpprobe drove), each with the index of
// its connection, which pairs a response with its request. It stops when the evaluation's
// context ends, and marks the pass cut.
func (in *inputs) scan(out *findings) iter.Seq2[*record.Index, jsonrpc.Frame] {
	return func(yield func(*record.Index, jsonrpc.Frame) bool) {
		n := 0
		for _, p := range in.Judged() {
			for _, f := range p.Frames {
				if n%checkEvery == 0 && in.ctx.Err() != nil {
					out.cut = true
					return
				}
				n++
				if !yield(p.X, f) {
					return
				}
			}
		}
	}
}

// add reports a finding of check c at line seq; past maxPerCheck findings of c, the last one
// listed counts the rest (Finding.More).
func (fs *findings) add(c *Check, seq int64, pointer, message string, evidence any) {
	if fs.counts == nil {
		fs.counts = map[string]int{}
	}
	fs.counts[c.ID]++
	if fs.counts[c.ID] > maxPerCheck {
		fs.list[fs.lastIndex(c.ID)].More++
		return
	}
	f := report.Finding{ID: c.ID, Tier: c.Tier, Title: c.Title, Message: message, Pointer: pointer, Seq: seq, SpecRef: c.SpecRef}
	if evidence != nil {
		f.Evidence, _ = json.Marshal(evidence)
	}
	fs.list = append(fs.list, f)
}

func (fs *findings) lastIndex(id string) int {
	for i := len(fs.list) - 1; i >= 0; i-- {
		if fs.list[i].ID == id {
			return i
		}
	}
	return -1
}

// sortFindings orders findings most severe first, then by the exchange they belong to
// (position), then by line, keeping the pass order among equals.
func sortFindings(x *record.Index, out []report.Finding) []report.Finding {
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Tier.Rank() != out[j].Tier.Rank() {
			return out[i].Tier.Rank() < out[j].Tier.Rank()
		}
		if pi, pj := x.Position(out[i].Seq), x.Position(out[j].Seq); pi != pj {
			return pi < pj
		}
		return out[i].Seq < out[j].Seq
	})
	if out == nil {
		out = []report.Finding{}
	}
	return out
}

// firstBytes shows the start of a line, quoted so that invalid bytes are visible.
func firstBytes(raw []byte) string {
	const n = 80
	if len(raw) > n {
		return strconv.Quote(string(raw[:n])) + "…"
	}
	return strconv.Quote(string(raw))
}

func rawOr(raw json.RawMessage, missing string) string {
	if raw == nil {
		return missing
	}
	return string(raw)
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
