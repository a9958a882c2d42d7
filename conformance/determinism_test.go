package conformance

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// identified is an outcome with each line number replaced by the line itself, so that two
// records holding the same lines in another order can be compared.
func identified(t *testing.T, x *record.Index, out Outcome) string {
	t.Helper()
	raw := map[int64]string{}
	for _, f := range x.Frames() {
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
	inv := *out.Extensions
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
	if out.PromptShapes != nil {
		s := *out.PromptShapes
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
	x, r, opts, _ := loadScenario(t, "testdata/scenarios/determinism.txtar")
	first, err := Evaluate(context.Background(), x, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := marshal(t, first)
	for range 30 {
		out, err := Evaluate(context.Background(), x, r, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := marshal(t, out); got != want {
			t.Fatalf("the same record gave another outcome:\n%s\n%s", got, want)
		}
	}
}

// TestAnswerOrderDoesNotMatter: the answers to requests sent together (method detection) may
// come back in any order; the findings, the extension inventory and the prompt shapes are the
// same, line for line, in the same order.
func TestAnswerOrderDoesNotMatter(t *testing.T) {
	x, r, opts, _ := loadScenario(t, "testdata/scenarios/determinism.txtar")
	out, err := Evaluate(context.Background(), x, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Findings) < 3 || len(out.Extensions.MetaKeys) == 0 {
		t.Fatalf("the scenario shows too little: %+v", out)
	}
	want := identified(t, x, out)
	// The block of answers to the detection batch: the agent frames after the last request
	// of the batch, up to the first step.
	frames := x.Frames()
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
		px := record.New(log.Frames())
		pout, err := Evaluate(context.Background(), px, probe.Derive(px, nil), opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := identified(t, px, pout); got != want {
			t.Fatalf("answers in another order (permutation %d) give another outcome:\n%s\n%s", n, got, want)
		}
	}
}

// TestErrorStyleIsAFunctionOfTheAnswers: the error style does not depend on the order the
// answers were read in.
func TestErrorStyleIsAFunctionOfTheAnswers(t *testing.T) {
	var errs []*jsonrpc.Error
	for _, f := range []string{"gemini-cli-0.61.0-empty-object.json", "claude-agent-acp-0.23.1-empty-object.json", "codex-acp-0.16.0-unknown-type.json"} {
		raw, err := os.ReadFile("testdata/errors/" + f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := jsonrpc.Decode(raw)
		if err != nil || m.Err() == nil {
			t.Fatalf("%s: %v", f, err)
		}
		errs = append(errs, m.Err())
	}
	errs = append(errs, &jsonrpc.Error{Code: -32602, Message: "prompt must be an array"})
	style := ""
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 2, 0, 3}, {2, 0, 3, 1}, {3, 1, 0, 2}} {
		inf := newInference()
		for _, i := range order {
			inf.read(errs[i])
		}
		if style == "" {
			style = inf.style
		}
		if inf.style != style {
			t.Errorf("order %v: style %q, another order gave %q", order, inf.style, style)
		}
	}
}
