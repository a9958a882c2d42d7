package derive

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/internal/recordtest"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
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
	for i, sh := range record.PromptShapes {
		id := 30 + i
		fmt.Fprintf(&b, `> {"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"prompt":%s,"sessionId":"%s"}}`+"\n", id, sh.Prompt, record.NonexistentSessionID)
		answer := json.RawMessage(`{"code":-32602,"message":"Invalid params"}`)
		if i == 1 {
			answer = errorJSON
		}
		fmt.Fprintf(&b, `< {"jsonrpc":"2.0","id":%d,"error":%s}`+"\n", id, answer)
	}
	b.WriteString(`! teardown {"step":"ladder"}` + "\n! eof\n! done\n")
	return record.New(recordtest.Frames(t, b.String()))
}

// TestShapeInferenceIsLinear attacks the prompt-shape inference (fault F3 of issue 11: a serde
// error listing 120k variants, 1 MB, took 118 s): inferring from an error ten times larger must
// take about ten times as long, not a hundred. The ratio is measured in the same run, so a slow
// or busy machine does not matter; the bound (30) sits between linear (10) and quadratic (100).
// The inference keeps the first names it sees and says it dropped the rest. Without the race
// detector (which makes it take half a minute), the whole derivation of a session whose agent
// answers a shape with the serde error is measured too.
func TestShapeInferenceIsLinear(t *testing.T) {
	cases := []struct {
		name        string
		small, big  json.RawMessage
		style       string
		first, last string // the first and last branch kept from the big error
	}{
		{"serde 120k variants", serdeError(12_000), serdeError(120_000), "serde", "v0", "v63"},
		{"zod tree 8000 deep", zodTree(800), zodTree(8000), "zod-tree", "t_" + letters(7999), "t_" + letters(7936)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.style == "serde" && len(tc.big) < 1<<20 {
				t.Fatalf("the big serde error is %d bytes, want at least 1 MiB", len(tc.big))
			}
			small, big := decodeError(t, tc.small), decodeError(t, tc.big)
			var inf *inference
			infer := func(e *jsonrpc.Error) func() {
				return func() {
					inf = newInference()
					inf.read(e)
					inf.branches()
					inf.requiredFields()
				}
			}
			linear(t, "inference", len(tc.small), len(tc.big), infer(small), infer(big))
			bs := inf.branches()
			if inf.style != tc.style || !inf.truncated || len(bs) != maxInferredBranches || bs[0].Type != tc.first || bs[len(bs)-1].Type != tc.last {
				t.Errorf("style %q truncated %v, %d branches %v…", inf.style, inf.truncated, len(bs), bs[:min(3, len(bs))])
			}
			if n := len(inf.requiredFields()); n > maxInferredFields {
				t.Errorf("%d required fields kept, the bound is %d", n, maxInferredFields)
			}
			if tc.style != "serde" || raceDetector {
				return
			}
			derivation := func(raw json.RawMessage) func() {
				conns := record.Split(shapesRecord(t, raw).Frames())
				return func() {
					if _, err := Run(context.Background(), conns, Options{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			linear(t, "derivation", len(tc.small), len(tc.big), derivation(tc.small), derivation(tc.big))
		})
	}
}

func decodeError(t *testing.T, raw json.RawMessage) *jsonrpc.Error {
	t.Helper()
	e := (&jsonrpc.Message{Error: raw}).Err()
	if e == nil {
		t.Fatalf("not an error object: %.80s", raw)
	}
	return e
}

// TestShapesSayTruncated: the prompt shapes of a session whose agent lists more variants than
// the inference keeps say so; those within the bound do not.
func TestShapesSayTruncated(t *testing.T) {
	for n, want := range map[int]bool{maxInferredBranches: false, maxInferredBranches + 1: true} {
		x := shapesRecord(t, serdeError(n))
		ps := deriveShapes(x, Connection(context.Background(), x, nil)).shapes
		if ps == nil || ps.InferenceTruncated != want || len(ps.InferredBranches) != maxInferredBranches {
			t.Errorf("%d variants: %+v, want inferenceTruncated %v and %d branches", n, ps, want, maxInferredBranches)
		}
	}
}

// linear runs small and big alternately, three times each (once under the race detector), and
// fails when the big one (about ten times the input) took more than 30 times the CPU time of
// the small one. Each run repeats its function enough for the small one to take about 40 ms
// (CPU time is counted in ticks); each side takes the least of its runs, the one least
// disturbed by the rest of the machine; a big run over the bound ends the measure (it fails
// anyway).
func linear(t *testing.T, what string, smallSize, bigSize int, small, big func()) {
	t.Helper()
	start := time.Now()
	small()
	reps := int(40*time.Millisecond/max(time.Since(start), time.Microsecond)) + 1
	runs := 3
	if raceDetector {
		runs = 1
	}
	measure := func(f func()) time.Duration {
		runtime.GC() // no garbage of the previous run collected during this one
		start := cpuTime()
		for range reps {
			f()
		}
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
	t.Logf("%s: %d bytes %v, %d bytes %v (CPU, %d times each): ratio %.1f", what, smallSize, ts, bigSize, tb, reps, ratio)
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

// TestSerdeVariants reads the variant lists of serde messages, edge cases included.
func TestSerdeVariants(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"unknown variant `x`, expected one of `text`, `image`", "text image"},
		{"unknown variant `x`, expected `text` or `image` at line 1 column 9", "text image"},
		// The first candidate is not followed by ", expected": the next one is read.
		{"unknown variant `unknown variant `x`, expected `a`", "a"},
		// The list ends with its line; an empty `` is no name, its closing backtick opens one.
		{"unknown variant `x`, expected one of ``a`\n`c`", "a"},
		{"unknown variant `x`, expected ```a`", "a"},
		// "one of " alone is the list (which names nothing).
		{"unknown variant `x`, expected one of ", ""},
		{"unknown variant `x`, expected \nunknown variant `y`, expected `z`", "z"},
		{"unknown variant `x`, expected", "-"},
		{"missing field `text`", "-"},
	} {
		list, ok := serdeVariants(tc.msg)
		got := "-"
		if ok {
			var names []string
			for rest := list; ; {
				var name string
				if name, rest, ok = nextBackticked(rest); !ok {
					break
				}
				names = append(names, name)
			}
			got = strings.Join(names, " ")
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.msg, got, tc.want)
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

// qwen-code 0.24.4 answers -32603 "Internal error" to every prompt shape: to the valid one for
// a session it does not have ("Session not found" in its data), and to a malformed one (zod's
// issues in its data). Only the data tells the two apart: a malformed shape is rejected, not
// undetermined (before, code and message alone were compared: 9 shapes came out undetermined).
func TestShapeErrorsToldApartByData(t *testing.T) {
	var b strings.Builder
	b.WriteString(`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	b.WriteString(`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"a","version":"1"}}}` + "\n")
	b.WriteString(`! step {"name":"prompt-shapes"}` + "\n")
	for i, sh := range record.PromptShapes {
		id := 30 + i
		fmt.Fprintf(&b, `> {"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"prompt":%s,"sessionId":"%s"}}`+"\n", id, sh.Prompt, record.NonexistentSessionID)
		data := `{"issues":[{"code":"invalid_type","path":["prompt"],"message":"Invalid input"}]}`
		if sh.Control {
			data = `{"details":"Session not found: ` + record.NonexistentSessionID + `"}`
		}
		fmt.Fprintf(&b, `< {"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"Internal error","data":%s}}`+"\n", id, data)
	}
	b.WriteString(`! teardown {"step":"ladder"}` + "\n! eof\n! done\n")
	x := record.New(recordtest.Frames(t, b.String()))
	ps := deriveShapes(x, Connection(context.Background(), x, nil)).shapes
	if ps == nil {
		t.Fatal("no prompt shapes")
	}
	rejected := 0
	for _, p := range ps.Probes {
		switch p.Outcome {
		case report.ShapeUndetermined:
			t.Errorf("shape %s: undetermined, want rejected (its zod issues are not the control's missing session)", p.Name)
		case report.ShapeRejected:
			rejected++
		}
	}
	if rejected == 0 {
		t.Errorf("no shape rejected: %+v", ps.Probes)
	}
}
