// Package schematest holds schematable's oracle for tests: the same documents compiled by
// github.com/santhosh-tekuri/jsonschema/v6, whose verdicts and leaf violations the validator
// must give, and the mutations of JSON values the tests feed both. Only tests import it, so the
// library never reaches a binary.
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpprobe/acpprobe/internal/schematable"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer formats the oracle's messages as the validator does.
var printer = message.NewPrinter(language.English)

// Oracle is a set of documents compiled by jsonschema/v6.
type Oracle struct {
	mu       sync.Mutex
	c        *jsonschema.Compiler
	urls     []string // each document's URL, in the order of the docs
	prefixes []string // each document's location prefix in schematable ("" for the first)
	compiled map[string]*jsonschema.Schema
}

// New compiles docs as schematable.Compile does (the first document's locations are "#/…",
// the others' "Name#/…"). A document with an $id is registered under it, so that the others
// can refer to it; one without gets a file URL. jsonschema/v6 asserts formats per compiler, so
// either every document asserts them (Doc.AssertFormats) or none does.
func New(docs ...schematable.Doc) (*Oracle, error) {
	o := &Oracle{c: jsonschema.NewCompiler(), compiled: map[string]*jsonschema.Schema{}}
	for i, d := range docs {
		if d.AssertFormats != docs[0].AssertFormats {
			return nil, fmt.Errorf("%s: AssertFormats differs from %s's: the oracle asserts formats in all documents or none", d.Name, docs[0].Name)
		}
		if d.AssertFormats {
			o.c.AssertFormat()
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(d.Raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		url := "file:///schematest/" + d.Name
		if m, ok := doc.(map[string]any); ok {
			if id, ok := m["$id"].(string); ok {
				url = id
			}
		}
		if err := o.c.AddResource(url, doc); err != nil {
			return nil, err
		}
		prefix := ""
		if i > 0 {
			prefix = d.Name
		}
		o.urls, o.prefixes = append(o.urls, url), append(o.prefixes, prefix)
	}
	return o, nil
}

// Validate is what jsonschema/v6 says of instance against the schema at loc (a schematable
// location: "#/$defs/X", "doc.json#/…"): its leaf violations, sorted, and whether the instance
// is JSON at all.
func (o *Oracle) Validate(t testing.TB, loc string, instance []byte) ([]schematable.Violation, bool) {
	t.Helper()
	o.mu.Lock()
	sch, ok := o.compiled[loc]
	if !ok {
		var err error
		sch, err = o.c.Compile(o.url(loc))
		if err != nil {
			o.mu.Unlock()
			t.Fatalf("oracle: %s: %v", loc, err)
		}
		o.compiled[loc] = sch
	}
	o.mu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return nil, false
	}
	verr := sch.Validate(inst)
	if verr == nil {
		return nil, true
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		t.Fatalf("oracle: %v", verr)
	}
	var out []schematable.Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			if k, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
				slices.Sort(k.Properties) // listed in map order; the validator sorts them
			}
			out = append(out, schematable.Violation{
				Pointer: schematable.Pointer(e.InstanceLocation),
				Keyword: o.loc(e.SchemaURL),
				Message: e.ErrorKind.LocalizedString(printer),
			})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	Sort(out)
	return out, true
}

// url is the oracle's URL of a schematable location.
func (o *Oracle) url(loc string) string {
	prefix, frag, _ := strings.Cut(loc, "#")
	i := max(slices.Index(o.prefixes, prefix), 0)
	return o.urls[i] + "#" + frag
}

// loc is the schematable location of an oracle's schema URL.
func (o *Oracle) loc(url string) string {
	base, frag, _ := strings.Cut(url, "#")
	if i := slices.Index(o.urls, base); i >= 0 {
		return o.prefixes[i] + "#" + frag
	}
	return url
}

// Sort orders violations by pointer, location and message (jsonschema/v6 reports an object's
// members in map order).
func Sort(vs []schematable.Violation) {
	slices.SortFunc(vs, func(a, b schematable.Violation) int {
		return strings.Compare(a.Pointer+"\x00"+a.Keyword+"\x00"+a.Message, b.Pointer+"\x00"+b.Keyword+"\x00"+b.Message)
	})
}

// Show writes violations one a line, for a test's failure message.
func Show(vs []schematable.Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s | %s | %s", v.Pointer, v.Keyword, v.Message)
	}
	if b.Len() == 0 {
		return "(valid)"
	}
	return b.String()
}

// Agree fails t unless got (the validator's violations, any order) are want (the oracle's,
// sorted).
func Agree(t testing.TB, what string, got, want []schematable.Violation) {
	t.Helper()
	sorted := slices.Clone(got)
	Sort(sorted)
	if !slices.Equal(sorted, want) {
		t.Fatalf("%s:\n got %s\nwant %s", what, Show(sorted), Show(want))
	}
}

// Mutants are variations of a decoded JSON value: at each location (up to limit of them) the
// value replaced by each of a set of others (every JSON type, numbers at and past common
// bounds, strings a terminal would act on), each object key dropped, and an unknown key added.
func Mutants(v any, limit int) []any {
	repl := []any{nil, true, json.Number("1"), json.Number("1.5"), json.Number("-1"), json.Number("1e400"),
		json.Number("65536"), json.Number("2.0"), "", "x\u202e", "text", "tool_call", "https://x/y", "relative/path",
		[]any{}, []any{json.Number("1")}, map[string]any{}}
	var out []any
	n := 0
	var walk func(cur any, set func(any))
	walk = func(cur any, set func(any)) {
		if n >= limit {
			return
		}
		n++
		for _, r := range repl {
			set(r)
			out = append(out, clone(v))
		}
		set(cur)
		switch x := cur.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				val := x[k]
				delete(x, k)
				out = append(out, clone(v))
				x[k] = val
				walk(val, func(nv any) { x[k] = nv })
			}
			x["zzUnknown"] = json.Number("1")
			out = append(out, clone(v))
			delete(x, "zzUnknown")
		case []any:
			for i := range x {
				walk(x[i], func(nv any) { x[i] = nv })
			}
		}
	}
	walk(v, func(any) {})
	return out
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			m[k] = clone(val)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, val := range x {
			a[i] = clone(val)
		}
		return a
	}
	return v
}

// HugeExponent reports a number with an exponent jsonschema/v6 cannot handle in reasonable time
// (it turns numbers into big.Rat), which the validator compares as text: fuzz targets skip
// such inputs.
func HugeExponent(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != 'e' && b[i] != 'E' {
			continue
		}
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if k-j > 4 {
			return true
		}
	}
	return false
}
