package conformance

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// identified is an outcome with each line number replaced by the line itself, so that two
// records holding the same lines in another order can be compared.
func identified(t *testing.T, facts *derive.Facts, out Outcome) string {
	t.Helper()
	raw := map[int64]string{}
	for _, f := range facts.Main.Frames() {
		raw[f.Seq] = string(f.Raw)
	}
	type finding struct {
		ID, Line, Pointer, Message string
		Evidence                   json.RawMessage
	}
	var fs []finding
	for _, f := range out.Findings {
		fs = append(fs, finding{f.ID, raw[f.Seq], f.Pointer, f.Message, f.Evidence})
	}
	lines := func(ws []extensions.Sighting) []extensions.Sighting {
		out := slices.Clone(ws)
		for i := range out {
			out[i].Method = raw[out[i].Seq] + " " + out[i].Method
			out[i].Seq = 0
		}
		return out
	}
	inv := *facts.Inventory()
	inv.MetaKeys, inv.Methods, inv.UnknownVariants = slices.Clone(inv.MetaKeys), slices.Clone(inv.Methods), slices.Clone(inv.UnknownVariants)
	for i := range inv.MetaKeys {
		inv.MetaKeys[i].Where = lines(inv.MetaKeys[i].Where)
	}
	for i := range inv.Methods {
		inv.Methods[i].Where = lines(inv.Methods[i].Where)
	}
	for i := range inv.UnknownVariants {
		inv.UnknownVariants[i].Where = lines(inv.UnknownVariants[i].Where)
	}
	var shapes *report.PromptShapes
	if facts.Result.PromptShapes != nil {
		s := *facts.Result.PromptShapes
		s.Probes = slices.Clone(s.Probes)
		for i := range s.Probes {
			s.Probes[i].Seq = 0
		}
		shapes = &s
	}
	b, err := json.Marshal(struct {
		Findings   []finding
		Extensions extensions.Inventory
		Shapes     *report.PromptShapes
	}{fs, inv, shapes})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSameRecordSameBytes: one record always gives the same outcome, byte for byte, even when a
// name appears in many places of one message (more than the sightings kept).
func TestSameRecordSameBytes(t *testing.T) {
	outcome := func() string {
		facts, _, _ := loadScenario(t, "testdata/scenarios/determinism.txtar")
		out := Evaluate(context.Background(), facts)
		return marshal(t, []any{out, facts.Inventory(), facts.Result.PromptShapes})
	}
	want := outcome()
	for range 30 {
		if got := outcome(); got != want {
			t.Fatalf("the same record gave another outcome:\n%s\n%s", got, want)
		}
	}
}

// TestAnswerOrderDoesNotMatter: the answers to requests sent together (method detection) may
// come back in any order; the findings, the extension inventory and the prompt shapes are the
// same, line for line, in the same order.
func TestAnswerOrderDoesNotMatter(t *testing.T) {
	facts, _, _ := loadScenario(t, "testdata/scenarios/determinism.txtar")
	out := Evaluate(context.Background(), facts)
	if len(out.Findings) < 3 || len(facts.Inventory().MetaKeys) == 0 {
		t.Fatalf("the scenario shows too little: %+v", out)
	}
	want := identified(t, facts, out)
	// The block of answers to the detection batch: the agent frames after the last request
	// of the batch, up to the first step.
	frames := facts.Main.Frames()
	start, end := -1, -1
	for i, f := range frames {
		if f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Kind() == jsonrpc.Response && i > 0 && frames[i-1].Dir == jsonrpc.DirClient && start < 0 && f.Msg.Err() != nil {
			start = i
		}
		if start >= 0 && end < 0 && f.Dir == jsonrpc.DirEvent {
			end = i
		}
	}
	if start < 0 || end-start < 5 {
		t.Fatalf("no block of answers to permute (%d…%d)", start, end)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 20 {
		block := slices.Clone(frames[start:end])
		if n == 0 {
			slices.Reverse(block)
		} else {
			rng.Shuffle(len(block), func(i, j int) { block[i], block[j] = block[j], block[i] })
		}
		permuted := slices.Concat(frames[:start], block, frames[end:])
		log := jsonrpc.NewLog()
		for _, f := range permuted {
			f.Seq = 0
			log.Append(f)
		}
		pfacts := factsOf(t, record.Split(log.Frames()), derive.Options{})
		if got := identified(t, pfacts, Evaluate(context.Background(), pfacts)); got != want {
			t.Fatalf("answers in another order (permutation %d) give another outcome:\n%s\n%s", n, got, want)
		}
	}
}
