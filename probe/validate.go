package probe

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// resultSchema is ResultJSONSchema compiled, once.
var resultSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ResultJSONSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("result.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("result.schema.json")
})

// ValidateResult checks a result document (JSON, as acpprobe --json prints it) against the
// published result schema (ResultJSONSchema): what consumers of the result may rely on. The
// tests check every report they make with it.
func ValidateResult(doc []byte) error {
	sch, err := resultSchema()
	if err != nil {
		return fmt.Errorf("result schema: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(inst)
}
