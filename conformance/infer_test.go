package conformance

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
)

// serdeError is a serde-style error listing n variants (about 10 bytes each).
func serdeError(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString("unknown variant `acpprobe_unknown`, expected one of ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "`v%d`", i)
	}
	raw, _ := json.Marshal(map[string]any{"code": -32602, "message": b.String()})
	return raw
}

// letters names i in lower-case letters (branch literals are [a-z_]+).
func letters(i int) string {
	s := ""
	for {
		s = string(rune('a'+i%26)) + s
		if i /= 26; i == 0 {
			return s
		}
	}
}

// zodTree is zod's formatted error tree nested depth deep: each level names its own branch
// literal and its own missing field.
func zodTree(depth int) json.RawMessage {
	var node any = map[string]any{"_errors": []any{}}
	for i := depth - 1; i >= 0; i-- {
		node = map[string]any{
			"_errors":             []any{},
			"type":                map[string]any{"_errors": []any{fmt.Sprintf(`Invalid input: expected "t_%s"`, letters(i))}},
			fmt.Sprintf("f%d", i): map[string]any{"_errors": []any{"Invalid input: expected string, received undefined"}},
			"next":                node,
		}
	}
	raw, _ := json.Marshal(map[string]any{"code": -32602, "message": "Invalid params", "data": node})
	return raw
}

// shapesRecord is a check --prompt-shapes session whose agent answers the first malformed
// shape with errorJSON and every other shape with a short error.
func shapesRecord(t *testing.T, errorJSON json.RawMessage) *record.Index {
	t.Helper()
	var b strings.Builder
	b.WriteString(`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	b.WriteString(`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"a","version":"1"}}}` + "\n")
	b.WriteString(`! step {"name":"prompt-shapes"}` + "\n")
	for i, sh := range shapes {
		id := 30 + i
		fmt.Fprintf(&b, `> {"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"prompt":%s,"sessionId":"%s"}}`+"\n", id, sh.prompt, probe.NonexistentSessionID)
		answer := json.RawMessage(`{"code":-32602,"message":"Invalid params"}`)
		if i == 1 {
			answer = errorJSON
		}
		fmt.Fprintf(&b, `< {"jsonrpc":"2.0","id":%d,"error":%s}`+"\n", id, answer)
	}
	b.WriteString(`! teardown {"step":"ladder"}` + "\n! eof\n! done\n")
	return record.New(buildFrames(t, b.String()))
}

// TestShapeInferenceIsLinear attacks the prompt-shape inference (fault F3 of issue 11: a serde
// error listing 120k variants, 1 MB, took 118 s): inferring the shapes of a session whose agent
// answers a shape with an error ten times larger must take about ten times as long, not a
// hundred. The ratio is measured in the same run, so a slow or busy machine does not matter;
// the bound (30) sits between linear (10) and quadratic (100). The inference keeps the first
// names it sees and says it dropped the rest. For the serde attack, the whole evaluation is
// measured too (not under the race detector, where it takes half a minute).
func TestShapeInferenceIsLinear(t *testing.T) {
	cases := []struct {
		name        string
		small, big  json.RawMessage
		whole       bool // measure Evaluate as well
		style       string
		first, last string // the first and last branch kept from the big error
	}{
		{"serde 120k variants", serdeError(12_000), serdeError(120_000), true, "serde", "v0", "v63"},
		{"zod tree 8000 deep", zodTree(800), zodTree(8000), false, "zod-tree", "t_" + letters(7999), "t_" + letters(7936)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.style == "serde" && len(tc.big) < 1<<20 {
				t.Fatalf("the big serde error is %d bytes, want at least 1 MiB", len(tc.big))
			}
			small, big := shapesRecord(t, tc.small), shapesRecord(t, tc.big)
			rs, rb := probe.Derive(small, nil), probe.Derive(big, nil)
			var ps *probe.PromptShapes
			linear(t, "inference", len(tc.small), len(tc.big), func() { deriveShapes(small, rs) }, func() { ps = deriveShapes(big, rb).shapes })
			if tc.whole && !raceDetector {
				evaluate := func(x *record.Index, r *probe.Result) func() {
					return func() {
						if _, err := Evaluate(x, r, Options{}); err != nil {
							t.Fatal(err)
						}
					}
				}
				linear(t, "evaluation", len(tc.small), len(tc.big), evaluate(small, rs), evaluate(big, rb))
			}
			bs := ps.InferredBranches
			if ps.ErrorStyle != tc.style || !ps.InferenceTruncated || len(bs) != maxInferredBranches || bs[0].Type != tc.first || bs[len(bs)-1].Type != tc.last {
				t.Errorf("style %q truncated %v, %d branches %v…", ps.ErrorStyle, ps.InferenceTruncated, len(bs), typesOf(bs[:min(3, len(bs))]))
			}
			if len(ps.RequiredFields) > maxInferredFields {
				t.Errorf("%d required fields kept, the bound is %d", len(ps.RequiredFields), maxInferredFields)
			}
		})
	}
}

// linear runs small and big alternately, three times each (once under the race detector), and
// fails when the big one (about ten times the input) took more than 30 times the CPU time of
// the small one. Each takes the least of its runs, the one least disturbed by the rest of the
// machine; a big run over the bound ends the measure (it fails anyway).
func linear(t *testing.T, what string, smallSize, bigSize int, small, big func()) {
	t.Helper()
	runs := 3
	if raceDetector {
		runs = 1
	}
	measure := func(f func()) time.Duration {
		runtime.GC() // no garbage of the previous run collected during this one
		start := cpuTime()
		f()
		return cpuTime() - start
	}
	var ts, tb time.Duration
	for i := range runs {
		s, b := measure(small), measure(big)
		if i == 0 || s < ts {
			ts = s
		}
		if i == 0 || b < tb {
			tb = b
		}
		if tb > 30*ts {
			break
		}
	}
	ratio := float64(tb) / float64(max(ts, time.Microsecond))
	t.Logf("%s: %d bytes %v, %d bytes %v (CPU): ratio %.1f", what, smallSize, ts, bigSize, tb, ratio)
	if ratio > 30 {
		t.Errorf("%s: %.0f times the input took %.0f times as long (%v vs %v): not linear", what, float64(bigSize)/float64(smallSize), ratio, tb, ts)
	}
}

// cpuTime is the CPU time the test process has used (all threads, user and system): unlike the
// wall clock, other processes on a busy machine do not inflate it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
