package render_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// nested is a _meta object nested depth deep: {"_meta":{"a":{"a":…1…}}}.
func nested(depth int) json.RawMessage {
	return json.RawMessage(`{"_meta":` + strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + "}")
}

// flat is a _meta object of at least size bytes, one level deep: {"_meta":{"k0":1,"k1":1,…}}.
func flat(size int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"_meta":{`)
	for i := 0; b.Len() < size-2; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":1`, i)
	}
	b.WriteString("}}")
	return json.RawMessage(b.String())
}

// rawResult is a result that carries v wherever a result holds what the agent sent verbatim.
func rawResult(t *testing.T, v json.RawMessage) *report.Result {
	r := v1(t, "check-claude")
	r.AuthMethods = []json.RawMessage{v}
	r.Raw.Initialize = v
	r.Raw.NewSession = v
	r.Error = &report.Error{Code: report.ErrUnknown, Stage: record.StageSessionNew, Message: "failed", AgentError: v}
	r.Findings = append(r.Findings, report.Finding{ID: "x", Tier: report.TierInfo, Message: "m", Evidence: v})
	r.PromptShapes = &report.PromptShapes{Probes: []report.ShapeProbe{{Name: "p", Prompt: v, Answer: v}}}
	return r
}

// measure runs f once and says how many bytes it wrote and allocated.
func measure(t *testing.T, f func(io.Writer) error) (written, allocated uint64) {
	t.Helper()
	var b bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return uint64(b.Len()), after.TotalAlloc - before.TotalAlloc
}

// TestOutputLinear (issue 11, F2): a value nested 9000 deep costs every writer about what a
// flat value of the same size costs, in bytes written and in bytes allocated. (Indenting raw
// values gave 162 MB of --json for 54 KB nested 9000 deep.)
func TestOutputLinear(t *testing.T) {
	deep := nested(9000)
	shallow := flat(len(deep))
	writers := map[string]func(r *report.Result) func(io.Writer) error{
		"JSON": func(r *report.Result) func(io.Writer) error {
			return func(w io.Writer) error { return render.JSON(w, r) }
		},
		"JSONLine": func(r *report.Result) func(io.Writer) error {
			return func(w io.Writer) error { return render.JSONLine(w, r) }
		},
		"Text": func(r *report.Result) func(io.Writer) error {
			return func(w io.Writer) error { return render.Text(w, r) }
		},
		"matrix JSON": func(r *report.Result) func(io.Writer) error {
			return func(w io.Writer) error { return render.JSON(w, oneRow(r)) }
		},
		"MatrixHTML": func(r *report.Result) func(io.Writer) error {
			return func(w io.Writer) error { return render.MatrixHTML(w, oneRow(r)) }
		},
		"MatrixMarkdown": func(r *report.Result) func(io.Writer) error {
			return func(w io.Writer) error { return render.MatrixMarkdown(w, oneRow(r)) }
		},
		"MatrixText": func(r *report.Result) func(io.Writer) error {
			return func(w io.Writer) error { return render.MatrixText(w, oneRow(r)) }
		},
	}
	for name, writer := range writers {
		t.Run(name, func(t *testing.T) {
			deepOut, deepAlloc := measure(t, writer(rawResult(t, deep)))
			flatOut, flatAlloc := measure(t, writer(rawResult(t, shallow)))
			t.Logf("%d-byte value nested 9000 deep: %d bytes written, %d allocated; flat: %d written, %d allocated",
				len(deep), deepOut, deepAlloc, flatOut, flatAlloc)
			if deepOut > 2*flatOut+4096 {
				t.Errorf("nested 9000 deep: %d bytes written, flat value of the same size: %d", deepOut, flatOut)
			}
			if deepAlloc > 3*flatAlloc+1<<20 {
				t.Errorf("nested 9000 deep: %d bytes allocated, flat value of the same size: %d", deepAlloc, flatAlloc)
			}
		})
	}
}

func oneRow(r *report.Result) *matrix.Matrix {
	return &matrix.Matrix{Schema: matrix.Schema, Version: "test", GeneratedAt: "2026-11-30T12:00:00Z",
		Rows: []matrix.Row{{ID: "deep", Source: "config", Launch: "agent", Result: r}}}
}
