package report

import (
	"fmt"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/internal/schematable"
)

// resultSchema is ResultJSONSchema compiled, once, with its formats asserted. It is compiled
// when first needed, with internal/schematable (standard library only), so that no acpprobe
// process links or initialises a JSON Schema library it does not use.
var resultSchema = sync.OnceValues(func() (*schematable.Table, error) {
	c, err := schematable.Compile(schematable.Doc{Name: "result.schema.json", Raw: ResultJSONSchema, AssertFormats: true})
	if err != nil {
		return nil, err
	}
	return c.Table, nil
})

// ValidateResult checks a result document (JSON, as acpprobe --json prints it) against the
// published result schema (ResultJSONSchema): what consumers of the result may rely on. The
// tests check every report they make with it. The error lists every violation, one a line.
func ValidateResult(doc []byte) error {
	t, err := resultSchema()
	if err != nil {
		return fmt.Errorf("result schema: %w", err)
	}
	inst, err := schematable.Decode(doc)
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	vs := t.Violations(t.Def(""), inst)
	if len(vs) == 0 {
		return nil
	}
	lines := make([]string, len(vs))
	for i, v := range vs {
		at := v.Pointer
		if at == "" {
			at = "/"
		}
		lines[i] = fmt.Sprintf("at %s: %s", at, v.Message)
	}
	return fmt.Errorf("the result does not match its schema:\n%s", strings.Join(lines, "\n"))
}
