package schematable_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpprobe/acpprobe/internal/schematable"
	"github.com/acpprobe/acpprobe/internal/schematable/schematest"
)

// kitchen are documents that use every keyword the validator implements, in both dialects,
// the draft-07 one referring to the other document by $id.
var kitchen = []schematable.Doc{
	{Name: "k.json", Raw: []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://x/k.json","$defs":{
		"Obj":{"type":["object","null"],"required":["kind","n"],"properties":{"kind":{"type":"string","const":"a"},"n":{"type":"integer","minimum":0,"maximum":65535},
			"f":{"type":"number","minimum":-1.5},"s":{"type":"string","minLength":2,"pattern":"^[a-z]+$","format":"uri"},"arr":{"type":"array","minItems":1,"items":{"$ref":"#/$defs/Obj"}},
			"e":{"enum":["x","y",1,null,true]},"never":false,"any":true},"additionalProperties":{"type":"boolean"},"propertyNames":{"minLength":1},"minProperties":1},
		"Union":{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"}},"required":["kind"],"allOf":[{"$ref":"#/$defs/Obj"}]},{"type":"object","properties":{"kind":{"const":"b"},"v":{"type":"string"}},"required":["kind","v"]},{"type":"string"},{"type":"number","not":{"type":"integer"}}]},
		"Any":{"anyOf":[{"$ref":"#/$defs/Union"},{"type":"array","items":{"$ref":"#/$defs/Any"}},{"type":"boolean"}]},
		"Closed":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false,"unevaluatedProperties":true},
		"Both":{"oneOf":[{"type":"integer"},{"minimum":0}]}}}`)},
	{Name: "d.json", Raw: []byte(`{"$schema":"http://json-schema.org/draft-07/schema#","$id":"https://x/d.json","type":"object","required":["id","dist"],
		"properties":{"id":{"type":"string","pattern":"^[a-z][a-z0-9-]*$"},"url":{"type":"string","format":"uri"},"k":{"$ref":"k.json#/$defs/Union"},
			"dist":{"type":"object","minProperties":1,"properties":{"bin":{"$ref":"#/definitions/Bin"}},"additionalProperties":false}},
		"definitions":{"Bin":{"type":"object","minProperties":1,"additionalProperties":{"type":"string"},"propertyNames":{"enum":["linux","darwin"]}}}}`)},
}

// kitchenValues are instances for the kitchen documents, valid and not.
var kitchenValues = []string{
	`{"kind":"a","n":1,"f":0.5,"s":"https://x","arr":[{"kind":"a","n":2}],"e":"x","extra":true}`,
	`{"kind":"b","v":"s"}`, `"str"`, `1.5`, `1`, `true`, `[1,"a",[{"kind":"b","v":"v"}]]`, `null`, `{}`,
	`{"kind":"a","n":-1,"f":-2,"s":"A","arr":[],"e":"z","never":1,"":true,"extra":"no"}`,
	`{"id":"a","dist":{"bin":{"linux":"x"}},"url":"https://ok/x"}`,
	`{"id":"A_","dist":{},"url":"relative","k":{"kind":"b"}}`,
	`{"id":"a","dist":{"bin":{"windows":"x","linux":1}},"url":"http://[::1%25eth0]:80/"}`,
	`{"id":"a","dist":{"bin":{}},"url":"http://fe80::1/x"}`,
	`{"a":"x"}`, `{"a":1,"b":2}`, `{"n":1e400,"kind":"a"}`, `{"kind":"a","n":65535.0}`,
}

// asserted is a 2020-12 document whose formats are asserted (Doc.AssertFormats), with the
// keywords only such documents use (date-time, maxItems), and instances valid and not.
var asserted = schematable.Doc{Name: "r.json", AssertFormats: true, Raw: []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema",
	"type":"object","properties":{"at":{"type":"string","format":"date-time"},"u":{"type":"string","format":"uri"},
	"few":{"type":"array","maxItems":2,"minItems":1,"items":{"type":"integer"}},"none":{"type":"array","maxItems":0}}}`)}

var assertedValues = []string{
	`{"at":"2026-11-30T19:59:39Z","u":"https://x/y","few":[1,2],"none":[]}`,
	`{"at":"2026-11-30t19:59:39.123456789+05:30","few":[1]}`, `{"at":"2016-12-31T23:59:60Z"}`, `{"at":"2016-12-31T18:59:60-05:00"}`,
	`{"at":"2016-12-31T23:58:60Z"}`, `{"at":"2026-11-30 19:59:39Z"}`, `{"at":"2026-02-30T19:59:39Z"}`, `{"at":"2026-11-30T19:59:39"}`,
	`{"at":"2026-11-30T24:00:00Z"}`, `{"at":"2026-11-30T19-59:39Z"}`, `{"at":"2026-11-30T19:59:39.Z"}`, `{"at":"2026-11-30T19:59:39+0530"}`,
	`{"at":"2026-11-30T19:59:39*05:30"}`, `{"at":"2026-11-30T19:59:39+05-30"}`, `{"at":"2026-11-30T19:59:39+24:00"}`, `{"at":"2026-11-30T1a:59:39Z"}`,
	`{"at":"2026-11-30T19:59:39+0a:30"}`, `{"at":"short"}`, `{"at":"2026-11-30T19:5Z"}`, `{"u":"relative","few":[1,2,3],"none":[1]}`, `{"few":[]}`,
}

// TestAssertedFormatsAgreeWithJSONSchema: formats asserted in a 2020-12 document, and maxItems,
// as jsonschema/v6 judges them with Compiler.AssertFormat.
func TestAssertedFormatsAgreeWithJSONSchema(t *testing.T) {
	c, err := schematable.Compile(asserted)
	if err != nil {
		t.Fatal(err)
	}
	o, err := schematest.New(asserted)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Table.Def("")
	var valid, invalid int
	for _, raw := range assertedValues {
		v, err := schematable.Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range append([]any{v}, schematest.Mutants(v, 12)...) {
			b, _ := json.Marshal(m)
			want, _ := o.Validate(t, "#", b)
			inst, _ := schematable.Decode(b)
			got := c.Table.Violations(n, inst)
			schematest.Agree(t, string(b), got, want)
			if (len(got) == 0) != c.Table.Valid(n, inst) {
				t.Fatalf("%s: Valid and Violations disagree", b)
			}
			if len(got) == 0 {
				valid++
			} else {
				invalid++
			}
		}
	}
	t.Logf("%d valid, %d invalid instances agree", valid, invalid)
	if valid < 5 || invalid < 40 {
		t.Fatalf("only %d valid and %d invalid instances: the values no longer exercise both sides", valid, invalid)
	}
}

// TestKitchenAgreesWithJSONSchema: every keyword, in both dialects, on values built to pass and
// to fail each one, and on mutants of them, as jsonschema/v6 judges them.
func TestKitchenAgreesWithJSONSchema(t *testing.T) {
	c, err := schematable.Compile(kitchen...)
	if err != nil {
		t.Fatal(err)
	}
	o, err := schematest.New(kitchen...)
	if err != nil {
		t.Fatal(err)
	}
	var valid, invalid int
	for _, d := range c.Table.Defs {
		for _, raw := range kitchenValues {
			v, err := schematable.Decode([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range append([]any{v}, schematest.Mutants(v, 12)...) {
				b, _ := json.Marshal(m)
				n := c.Table.Def(d.Name)
				want, _ := o.Validate(t, c.Table.Nodes[n].Loc, b)
				inst, _ := schematable.Decode(b)
				got := c.Table.Violations(n, inst)
				schematest.Agree(t, fmt.Sprintf("%s on %s", d.Name, b), got, want)
				if (len(got) == 0) != c.Table.Valid(n, inst) {
					t.Fatalf("%s on %s: Valid and Violations disagree", d.Name, b)
				}
				if len(got) == 0 {
					valid++
				} else {
					invalid++
				}
			}
		}
	}
	t.Logf("%d valid, %d invalid instances agree", valid, invalid)
	if valid < 100 || invalid < 1000 {
		t.Errorf("too few of each verdict: %d valid, %d invalid", valid, invalid)
	}
}

// TestRegistryIndexAgreesWithJSONSchema: the registry's index schema (draft-07, two documents)
// on an index of every agent.json of the registry snapshot, and on its mutants.
func TestRegistryIndexAgreesWithJSONSchema(t *testing.T) {
	var docs []schematable.Doc
	for _, f := range []string{"registry.schema.json", "index-2026-08/agent.schema.json"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "registry", "data", f))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, schematable.Doc{Name: filepath.Base(f), Raw: raw})
	}
	c, err := schematable.Compile(docs...)
	if err != nil {
		t.Fatal(err)
	}
	o, err := schematest.New(docs...)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "registry", "data", "*", "agent.json"))
	var agents []any
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := schematable.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, v)
	}
	if len(agents) < 3 {
		t.Fatalf("only %d agent.json files", len(agents))
	}
	index := map[string]any{"version": "1.0.0", "agents": agents, "extensions": []any{}}
	root := c.Table.Def("")
	var valid, invalid int
	for _, m := range append([]any{index}, schematest.Mutants(index, 60)...) {
		b, _ := json.Marshal(m)
		want, _ := o.Validate(t, "#", b)
		inst, _ := schematable.Decode(b)
		schematest.Agree(t, fmt.Sprintf("index %.200s", b), c.Table.Violations(root, inst), want)
		if len(want) == 0 {
			valid++
		} else {
			invalid++
		}
	}
	t.Logf("%d valid, %d invalid indexes agree", valid, invalid)
	if valid < 10 || invalid < 300 {
		t.Errorf("too few of each verdict: %d valid, %d invalid", valid, invalid)
	}
}

// FuzzKitchenAgreesWithJSONSchema: any bytes, as any type of the kitchen documents.
func FuzzKitchenAgreesWithJSONSchema(f *testing.F) {
	c, err := schematable.Compile(kitchen...)
	if err != nil {
		f.Fatal(err)
	}
	o, err := schematest.New(kitchen...)
	if err != nil {
		f.Fatal(err)
	}
	for i, v := range kitchenValues {
		f.Add([]byte(v), uint8(i))
	}
	f.Fuzz(func(t *testing.T, instance []byte, def uint8) {
		if !json.Valid(instance) || schematest.HugeExponent(instance) {
			return
		}
		n := c.Table.Defs[int(def)%len(c.Table.Defs)].Node
		want, _ := o.Validate(t, c.Table.Nodes[n].Loc, instance)
		inst, err := schematable.Decode(instance)
		if err != nil {
			t.Fatalf("%q: %v", instance, err)
		}
		schematest.Agree(t, fmt.Sprintf("%s on %s", c.Table.Nodes[n].Loc, instance), c.Table.Violations(n, inst), want)
	})
}
