package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedIsCurrent: the checked-in tables are what the generator writes from the pinned
// documents (run `go generate ./acp/schema` after changing either).
func TestGeneratedIsCurrent(t *testing.T) {
	dir := filepath.Join("..", "..")
	want, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, output))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("acp/schema/%s is not what the generator writes from the pinned schemas: run go generate ./acp/schema", output)
	}
}

// TestRefusesWhatTheValidatorDoesNotImplement: a keyword the validator does not know, a
// reference outside $defs and a cycle that consumes no input stop the generator.
func TestRefusesWhatTheValidatorDoesNotImplement(t *testing.T) {
	cases := map[string]string{
		`{"$defs":{"A":{"type":"string","maxLength":3}}}`:                           `keyword "maxLength"`,
		`{"$defs":{"A":{"$ref":"other.json#/x"}}}`:                                  "only references into #/$defs",
		`{"$defs":{"A":{"$ref":"#/$defs/B"}}}`:                                      "resolves to no schema",
		`{"$defs":{"A":{"allOf":[{"$ref":"#/$defs/B"}]},"B":{"$ref":"#/$defs/A"}}}`: "cycle",
		`{"$defs":{"A":{"const":{"a":1}}}}`:                                         "only scalar",
		`{"$defs":{"A":{"type":"int"}}}`:                                            "unknown type",
		`{"$defs":{"A":{"unevaluatedProperties":false}}}`:                           "unevaluatedProperties",
		`{"$defs":{"A":{"pattern":"(?=a)"}}}`:                                       "pattern",
	}
	for doc, want := range cases {
		_, err := compileSet([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one about %q", doc, err, want)
		}
	}
	// And what it supports compiles, recursion through properties included.
	if _, err := compileSet([]byte(`{"$defs":{"A":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"required":["a"],"description":"d","x-side":"agent"}}}`)); err != nil {
		t.Errorf("a recursive type: %v", err)
	}
}
