package jsonout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// doc is a document with the shapes acpprobe's results have: structs, maps, slices, pointers,
// embedded structs and values an agent sent (json.RawMessage).
type doc struct {
	Name    string                     `json:"name"`
	Raw     json.RawMessage            `json:"raw,omitempty"`
	Items   []item                     `json:"items"`
	ByKey   map[string]*item           `json:"byKey,omitempty"`
	Any     any                        `json:"any,omitempty"`
	Skipped string                     `json:"-"`
	Nested  map[string]json.RawMessage `json:"nested,omitempty"`
	embedded
}

type embedded struct {
	Inner int `json:"inner"`
}

type item struct {
	ID  int             `json:"id"`
	Raw json.RawMessage `json:"raw"`
}

// nested is an object nested depth deep: {"a":{"a":…1…}}.
func nested(depth int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
}

// flat is an object of about size bytes, one level deep.
func flat(size int) json.RawMessage {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; b.Len() < size-1; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":1`, i)
	}
	b.WriteString("}")
	return json.RawMessage(b.String())
}

func sample(raw json.RawMessage) doc {
	return doc{Name: "n", Raw: raw, Items: []item{{1, raw}, {2, json.RawMessage(`[1,{"b":null}]`)}},
		ByKey: map[string]*item{"k": {3, raw}}, Any: map[string]any{"x": []any{1, "y"}},
		Nested: map[string]json.RawMessage{"n": raw}, embedded: embedded{7}}
}

// TestIndentIsMarshal: the text is json.Marshal's, indented: compacting it gives exactly what
// json.Marshal writes, and the document's own structure is on lines of its own.
func TestIndentIsMarshal(t *testing.T) {
	v := sample(json.RawMessage(`{"deep":{"x":[1,2,{"y":"z"}]}}`))
	out, err := Indent(v)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(v)
	var compact bytes.Buffer
	if err := json.Compact(&compact, out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if compact.String() != string(want) {
		t.Errorf("compacted:\n%s\nwant:\n%s", compact.String(), want)
	}
	for _, line := range []string{"\n  \"name\": \"n\",\n", "\n  \"raw\": {\"deep\":{\"x\":[1,2,{\"y\":\"z\"}]}},\n",
		"\n    {\n      \"id\": 1,\n", "\n  \"inner\": 7\n}\n"} {
		if !strings.Contains(string(out), line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	if out[len(out)-1] != '\n' {
		t.Error("no final newline")
	}
}

// TestHiddenCharactersEscaped: a character a terminal would act on or hide is written as an
// escape, in the document's strings and in what the agent sent; others stay as they are.
func TestHiddenCharactersEscaped(t *testing.T) {
	v := doc{Name: "a\u202eb\u00e9\u009b\U000e0041", Raw: json.RawMessage(`{"k":"x` + "\u200b" + `y"}`)}
	for name, write := range map[string]func(any) ([]byte, error){"Indent": Indent, "Line": Line} {
		out, err := write(v)
		if err != nil {
			t.Fatal(err)
		}
		s := string(out)
		for _, want := range []string{`a\u202eb` + "\u00e9" + `\u009b\udb40\udc41`, `x\u200by`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: %q lacks %q", name, s, want)
			}
		}
		if strings.ContainsAny(s, "\u202e\u200b\u009b") {
			t.Errorf("%s: a hidden character is written raw: %q", name, s)
		}
		var back doc
		if err := json.Unmarshal(out, &back); err != nil || back.Name != v.Name {
			t.Errorf("%s: does not read back: %v %q", name, err, back.Name)
		}
	}
	if line, _ := Line(v); bytes.Count(line, []byte("\n")) != 1 {
		t.Errorf("Line is not one line: %q", line)
	}
}

// TestOutputLinear: a value nested 9000 deep costs what a flat value of the same size costs,
// in bytes written and in bytes allocated (json.MarshalIndent writes about d²/2 spaces for a
// value nested d deep: 162 MB for 54 KB nested 9000 deep).
func TestOutputLinear(t *testing.T) {
	deep := nested(9000)
	shallow := flat(len(deep))
	measure := func(raw json.RawMessage) (written, allocated uint64) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := Indent(sample(raw))
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return uint64(len(out)), after.TotalAlloc - before.TotalAlloc
	}
	deepOut, deepAlloc := measure(deep)
	flatOut, flatAlloc := measure(shallow)
	t.Logf("%d bytes nested 9000 deep: %d written, %d allocated; flat: %d written, %d allocated", len(deep), deepOut, deepAlloc, flatOut, flatAlloc)
	if deepOut > 2*flatOut+4096 {
		t.Errorf("nested 9000 deep: %d bytes written, flat value of the same size: %d", deepOut, flatOut)
	}
	if deepAlloc > 3*flatAlloc+1<<20 {
		t.Errorf("nested 9000 deep: %d bytes allocated, flat value of the same size: %d", deepAlloc, flatAlloc)
	}
	// What it is for: json.MarshalIndent is quadratic (shown 3000 deep, to keep it quick).
	mid := nested(3000)
	b, _ := json.MarshalIndent(sample(mid), "", "  ")
	if out, _ := Indent(sample(mid)); len(b) < 50*len(out) {
		t.Errorf("json.MarshalIndent wrote %d bytes, Indent %d: the comparison no longer shows the problem", len(b), len(out))
	}
}

// TestHidden: the characters beyond ASCII that are never printed as themselves.
func TestHidden(t *testing.T) {
	for r, want := range map[rune]bool{'é': false, '中': false, 0x85: true, 0x9b: true, 0x200b: true, 0x202e: true,
		0x2028: true, 0xfeff: true, 0xe0041: true, 0x115f: true} {
		if Hidden(r) != want {
			t.Errorf("Hidden(%U) = %v, want %v", r, !want, want)
		}
	}
}
