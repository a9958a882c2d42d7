package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validate checks that instance satisfies schema, with the repository's pinned validator.
// Gemini's upper-case type names are lower-cased first (the OpenAPI subset Gemini uses).
func validate(t *testing.T, schema, instance string) {
	t.Helper()
	for _, up := range []string{"OBJECT", "STRING", "INTEGER", "NUMBER", "BOOLEAN", "ARRAY"} {
		schema = strings.ReplaceAll(schema, `"`+up+`"`, `"`+strings.ToLower(up)+`"`)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatalf("compile %s: %v", schema, err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(instance))
	if err != nil {
		t.Fatalf("answer %q is not JSON: %v", instance, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("answer %s does not satisfy %s: %v", instance, schema, err)
	}
}

func TestMinimalSatisfiesSchema(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{}`, `{}`},
		{`true`, `null`},
		{`{"type":"string"}`, `""`},
		{`{"type":"string","minLength":3}`, `"aaa"`},
		{`{"type":"string","format":"date-time"}`, `"1970-01-01T00:00:00Z"`},
		{`{"type":"string","format":"email"}`, `"a@example.com"`},
		{`{"type":"string","format":"uuid"}`, `"00000000-0000-0000-0000-000000000000"`},
		{`{"type":"integer"}`, `1`},
		{`{"type":"integer","minimum":5,"maximum":9}`, `5`},
		{`{"type":"integer","maximum":-3}`, `-3`},
		{`{"type":"integer","exclusiveMinimum":7}`, `8`},
		{`{"type":"number","exclusiveMaximum":0}`, `-1`},
		{`{"type":"number","minimum":0.5,"multipleOf":0.25}`, `1`},
		{`{"type":"integer","minimum":4,"multipleOf":3}`, `6`},
		{`{"type":"boolean"}`, `false`},
		{`{"type":"null"}`, `null`},
		{`{"type":["null","string"]}`, `""`},
		{`{"enum":["b","a"]}`, `"b"`},
		{`{"const":{"k":1}}`, `{"k":1}`},
		{`{"type":"array","minItems":2,"items":{"type":"integer"}}`, `[1,1]`},
		{`{"type":"array","minItems":3,"uniqueItems":true,"items":{"type":"string"}}`, `["","1","2"]`},
		{`{"type":"array","prefixItems":[{"type":"string"},{"type":"boolean"}],"minItems":2}`, `["",false]`},
		{`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"]}`, `{"b":1}`},
		{`{"type":"object","minProperties":2,"properties":{"x":{"type":"string"}}}`, `{"p1":null,"x":""}`},
		{`{"type":"object","required":["extra"],"additionalProperties":{"type":"boolean"}}`, `{"extra":false}`},
		{`{"anyOf":[{"type":"null"},{"type":"object","required":["k"],"properties":{"k":{"const":"v"}}}]}`, `{"k":"v"}`},
		{`{"oneOf":[{"type":"string","enum":["x"]},{"type":"integer"}]}`, `"x"`},
		{`{"allOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"integer"}}},{"required":["b"],"properties":{"b":{"type":"string"}}}]}`, `{"a":1,"b":""}`},
		{`{"$defs":{"n":{"type":"object","required":["v"],"properties":{"v":{"type":"string","enum":["leaf"]}}}},"type":"object","required":["node"],"properties":{"node":{"$ref":"#/$defs/n"}}}`, `{"node":{"v":"leaf"}}`},
		{`{"definitions":{"a~b/c":{"type":"integer"}},"$ref":"#/definitions/a~0b~1c"}`, `1`},
		{`{"type":"object","properties":{"next":{"$ref":"#"}}}`, `{}`},
		{`{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"}},"required":["complexity_reasoning","complexity_score"]}`, `{"complexity_reasoning":"","complexity_score":1}`},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`, `{"content":"","file_path":""}`},
	} {
		got, err := Minimal(json.RawMessage(tc.schema))
		if err != nil {
			t.Errorf("Minimal(%s): %v", tc.schema, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("Minimal(%s) = %s, want %s", tc.schema, got, tc.want)
		}
		if tc.schema != "true" {
			validate(t, tc.schema, string(got))
		}
	}
}

func TestMinimalBounds(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","required":["self"],"properties":{"self":{"$ref":"#"}}}`,        // infinite recursion
		`{"type":"array","minItems":1000000,"items":{"type":"array","minItems":1000000}}`, // huge
		`{"type":"array","minItems":200,"items":{"type":"string","minLength":100000}}`,    // long strings
		`{"allOf":[{"$ref":"#"}]}`, // allOf of itself
		strings.Repeat(`{"type":"object","required":["a"],"properties":{"a":`, 40) + `{}` + strings.Repeat(`}}`, 40), // too deep
	} {
		got, err := Minimal(json.RawMessage(schema))
		if !errors.Is(err, ErrSchemaTooLarge) {
			t.Errorf("Minimal(%.80s…) = %.80s, %v: want ErrSchemaTooLarge", schema, got, err)
		}
	}
	if _, err := Minimal(json.RawMessage(`{"type":`)); err == nil || errors.Is(err, ErrSchemaTooLarge) {
		t.Errorf("invalid JSON: %v", err)
	}
}

// FuzzMinimal: over any schema Minimal never panics, ends, and returns bounded valid JSON
// or an error.
func FuzzMinimal(f *testing.F) {
	for _, s := range []string{`{}`, `{"type":"object","required":["a"],"properties":{"a":{"$ref":"#"}}}`,
		`{"anyOf":[{"type":"null"},{"allOf":[{"$ref":"#/$defs/x"}]}],"$defs":{"x":{"type":"array","minItems":3}}}`,
		`{"type":["integer","null"],"minimum":1e308,"multipleOf":1e-308}`, `{"enum":[]}`, `[1,2]`, `"x"`,
		`{"type":"object","minProperties":300,"additionalProperties":{"type":"string","minLength":9999}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		if len(schema) > 1<<16 {
			return
		}
		got, err := Minimal(schema)
		if err != nil {
			return
		}
		if !json.Valid(got) || len(got) > 2*maxMinBytes {
			t.Fatalf("Minimal(%q) = %d bytes, valid %v", schema, len(got), json.Valid(got))
		}
		if bytes.Contains(got, []byte("NaN")) || bytes.Contains(got, []byte("Inf")) {
			t.Fatalf("Minimal(%q) = %s", schema, got)
		}
	})
}
