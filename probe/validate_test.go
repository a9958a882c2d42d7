package probe_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/internal/schematable"
	"github.com/acpprobe/acpprobe/internal/schematable/schematest"
	"github.com/acpprobe/acpprobe/report"
)

// TestValidateResultAgreesWithJSONSchema: ValidateResult judges the result schema as
// jsonschema/v6 (with its formats asserted) does, violation for violation, on real results
// and their mutants.
func TestValidateResultAgreesWithJSONSchema(t *testing.T) {
	o, err := schematest.New(schematable.Doc{Name: "result.schema.json", Raw: report.ResultJSONSchema, AssertFormats: true})
	if err != nil {
		t.Fatal(err)
	}
	var valid, invalid int
	for _, persona := range []string{"claude", "minimal"} {
		r, _ := run(t, acptest.Config{Persona: persona}, nil)
		raw, _ := json.Marshal(r)
		v, err := schematable.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range append([]any{v}, schematest.Mutants(v, 40)...) {
			b, _ := json.Marshal(m)
			want, _ := o.Validate(t, "#", b)
			var wantLines []string
			for _, w := range want {
				at := w.Pointer
				if at == "" {
					at = "/"
				}
				wantLines = append(wantLines, fmt.Sprintf("at %s: %s", at, w.Message))
			}
			var gotLines []string
			if err := report.ValidateResult(b); err != nil {
				_, list, _ := strings.Cut(err.Error(), "\n")
				gotLines = strings.Split(list, "\n")
			}
			slices.Sort(wantLines)
			slices.Sort(gotLines)
			if !slices.Equal(gotLines, wantLines) {
				t.Fatalf("%s: ValidateResult says\n%s\njsonschema/v6 says\n%s\non %s", persona, strings.Join(gotLines, "\n"), strings.Join(wantLines, "\n"), b)
			}
			if len(gotLines) == 0 {
				valid++
			} else {
				invalid++
			}
		}
	}
	t.Logf("%d valid, %d invalid results agree", valid, invalid)
	if valid < 2 || invalid < 40 {
		t.Fatalf("only %d valid and %d invalid results: the mutants no longer exercise both sides", valid, invalid)
	}
}
