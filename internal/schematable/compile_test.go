package schematable

import (
	"strings"
	"testing"
)

const draft2020 = `"$schema":"https://json-schema.org/draft/2020-12/schema"`
const draft07 = `"$schema":"http://json-schema.org/draft-07/schema#"`

// TestRefusesWhatTheValidatorDoesNotImplement: a keyword the validator does not know, a
// reference it cannot resolve, a cycle that consumes no input, a format it cannot assert and an
// ambiguity of draft-07 stop the compiler.
func TestRefusesWhatTheValidatorDoesNotImplement(t *testing.T) {
	cases := map[string]string{
		`{` + draft2020 + `,"$defs":{"A":{"type":"string","maxLength":3}}}`:                           `keyword "maxLength"`,
		`{` + draft2020 + `,"$defs":{"A":{"$ref":"other.json#/x"}}}`:                                  "no $id",
		`{` + draft2020 + `,"$defs":{"A":{"$ref":"#/$defs/B"}}}`:                                      "no schema of the set",
		`{` + draft2020 + `,"$defs":{"A":{"$ref":"#anchor"}}}`:                                        "JSON pointer fragments",
		`{` + draft2020 + `,"$defs":{"A":{"allOf":[{"$ref":"#/$defs/B"}]},"B":{"$ref":"#/$defs/A"}}}`: "cycle",
		`{` + draft2020 + `,"$defs":{"A":{"const":{"a":1}}}}`:                                         "only scalar",
		`{` + draft2020 + `,"$defs":{"A":{"type":"int"}}}`:                                            "unknown type",
		`{` + draft2020 + `,"$defs":{"A":{"unevaluatedProperties":false}}}`:                           "unevaluatedProperties",
		`{` + draft2020 + `,"$defs":{"A":{"pattern":"(?=a)"}}}`:                                       "pattern",
		`{` + draft2020 + `,"$defs":{"A":{"items":[{}]}}}`:                                            "single items",
		`{` + draft2020 + `,"$defs":{"A":{"$defs":{}}}}`:                                              `keyword "$defs"`,
		`{"$defs":{"A":{}}}`: "only 2020-12 and draft-07",
		`{` + draft07 + `,"definitions":{"A":{"type":"string","format":"email"}}}`:                `format "email"`,
		`{` + draft07 + `,"definitions":{"A":{"$ref":"#/definitions/B","type":"string"},"B":{}}}`: `ignores "type" beside $ref`,
		`{` + draft07 + `,"$id":"https://x/a.json","definitions":{"A":{"$ref":"b.json"}}}`:        "no document of the set",
		`{` + draft07 + `,"definitions":{"A":{"minProperties":-1}}}`:                              "non-negative",
	}
	for doc, want := range cases {
		_, err := Compile(Doc{Name: "a.json", Raw: []byte(doc)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one about %q", doc, err, want)
		}
	}
}

// TestCompiles: what the validator supports compiles, with its locations, names and
// annotations: recursion through properties, references between documents by $id, the roots
// and the named types of every document, x-method and x-side.
func TestCompiles(t *testing.T) {
	c, err := Compile(
		Doc{Name: "a.json", Raw: []byte(`{` + draft07 + `,"$id":"https://x/v1/a.json","type":"object","properties":{"b":{"$ref":"b.json"},"c":{"$ref":"b.json#/definitions/T"}}}`)},
		Doc{Name: "b.json", Raw: []byte(`{` + draft07 + `,"$id":"https://x/v1/b.json","type":"array","definitions":{"T":{"type":"object","format":"uri","properties":{"t":{"$ref":"#/definitions/T"}},"x-method":"m/x","x-side":"agent","description":"d"}}}`)},
	)
	if err != nil {
		t.Fatal(err)
	}
	tb := c.Table
	var names []string
	for _, d := range tb.Defs {
		names = append(names, d.Name)
	}
	if got := strings.Join(names, ","); got != ",b.json,b.json#T" {
		t.Errorf("defs %q", got)
	}
	a := &tb.Nodes[tb.Def("")]
	b := &tb.Nodes[a.Prop("b")]
	if b.Loc != "#/properties/b" || tb.Nodes[b.Ref].Loc != "b.json#" || tb.Nodes[b.Ref].Types != TArray {
		t.Errorf("reference to a document: %+v", b)
	}
	if c := &tb.Nodes[a.Prop("c")]; c.Ref != tb.Def("b.json#T") || tb.Nodes[c.Ref].Loc != "b.json#/definitions/T" {
		t.Errorf("reference into a document: %+v", c)
	}
	T := &tb.Nodes[tb.Def("b.json#T")]
	if T.Format != "uri" || T.Types != TObject || tb.Nodes[T.Prop("t")].Ref != tb.Def("b.json#T") {
		t.Errorf("T: %+v", T)
	}
	if m := c.Methods["b.json#T"]; m != (Method{"m/x", "agent"}) {
		t.Errorf("methods %+v", c.Methods)
	}
	// format is an annotation in 2020-12.
	c, err = Compile(Doc{Name: "c.json", Raw: []byte(`{` + draft2020 + `,"$defs":{"U":{"type":"string","format":"email"}}}`)})
	if err != nil || c.Table.Nodes[c.Table.Def("U")].Format != "" {
		t.Errorf("2020-12 format: %v", err)
	}
}

// TestLiteralCompilesBack: the Go source of a table is valid Go that names every field it sets.
func TestLiteralCompilesBack(t *testing.T) {
	c, err := Compile(Doc{Name: "a.json", Raw: []byte(`{` + draft2020 + `,"$defs":{"A":{"type":["object","null"],"required":["x"],"properties":{"x":{"const":1},"y":{"enum":["a",null,true]},"z":false},"additionalProperties":{"minimum":0,"maximum":9},"anyOf":[{"minProperties":1},{"not":{"pattern":"^a"}}],"oneOf":[true],"allOf":[{"items":{"minLength":2}}],"propertyNames":{"minLength":1},"x-deserialize-default-on-error":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	src, err := Source("// Code generated by a test. DO NOT EDIT.", "x", "var table = "+c.Table.Literal()+"\n")
	if err != nil {
		t.Fatalf("not Go: %v", err)
	}
	for _, want := range []string{"Types: schematable.TNull | schematable.TObject", "Required: []string{\"x\"}", "Const: schematable.Value{Kind: schematable.KNumber, Text: \"1\"}",
		"Boolean: schematable.SchemaFalse", "Boolean: schematable.SchemaTrue", "Minimum: \"0\"", "Maximum: \"9\"", "Pattern: \"^a\"", "MinProperties: 1",
		"PropertyNames: ", "Lenient: true", "Enum: []schematable.Value{", "schematable.KNull", "AnyOf: []int32{", "OneOf: []int32{", "AllOf: []int32{", "MinLength: 2"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the source lacks %q:\n%s", want, src)
		}
	}
}
