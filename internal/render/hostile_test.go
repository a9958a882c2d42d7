package render_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/report"
)

// attack is what a hostile agent puts in every string it sends (issue 11, F4): an OSC window
// title, an OSC 8 link to its own URL, a screen clear, a line overwritten with CR, a bidi
// override, a zero-width space, a C1 CSI, a byte that is not UTF-8, a bidi isolate, and a
// line break followed by a fake report line.
const attack = "\x1b]0;pwned\x07" +
	"\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\" +
	"\x1b[2J" +
	"fake\rREAL" +
	"\u202eevil\u202c" +
	"\u200b" +
	"\u009b31m" +
	"\xff" +
	"\u2066x\u2069" +
	"\r\n  Findings (0)\n"

var tierType = reflect.TypeFor[report.Tier]()

// poison appends the attack to every string reachable from v that is not empty (in copies of
// the slices, maps and pointed-to values it goes through), map keys and
// the strings inside json.RawMessage values included (tiers excepted, so that the findings are
// still shown; empty strings too, which say that something is absent).
func poison(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer: // a copy: the values of the other tests stay as they are
		if !v.IsNil() {
			c := reflect.New(v.Elem().Type())
			c.Elem().Set(v.Elem())
			v.Set(c)
			poison(c.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				poison(f)
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			if v.Len() > 0 {
				v.SetBytes(poisonJSON(v.Bytes()))
			}
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		v.Set(c)
		for i := range v.Len() {
			poison(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		m := reflect.MakeMap(v.Type())
		iter := v.MapRange()
		for iter.Next() {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(iter.Key())
			if k.Kind() == reflect.String && v.Type().Elem() != reflect.TypeFor[report.MethodSupport]() {
				poison(k)
			}
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(iter.Value())
			poison(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.String:
		if v.Type() != tierType && v.String() != "" {
			v.SetString(v.String() + attack)
		}
	}
}

func poisonJSON(raw []byte) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return x + attack
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				out[k+attack] = walk(e)
				out[k] = walk(e) // the known keys too, so that the views still find them
			}
			return out
		}
		return v
	}
	b, _ := json.Marshal(walk(v))
	return b
}

func poisoned[T any](v T) T {
	poison(reflect.ValueOf(&v).Elem())
	return v
}

// ownANSI are the sequences the matrix progress writes itself on a terminal.
var ownANSI = regexp.MustCompile(`\x1b\[(\d+A|2K)`)

// assertInert fails when out holds anything a terminal would act on or hide: a control
// character other than LF (ESC, CR, BEL…), DEL, a C1 control, an invisible format character
// (bidi, zero-width), a line separator, or bytes that are not UTF-8. It also wants the attack
// to have been shown (escaped), so that a writer that drops the strings cannot pass.
func assertInert(t *testing.T, what string, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Errorf("%s: output is not UTF-8", what)
	}
	for i, r := range string(out) {
		bad := (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
			unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point)
		if bad {
			t.Errorf("%s: raw %U at byte %d: %q", what, r, i, out[max(0, i-40):min(len(out), i+40)])
			return
		}
	}
	if !bytes.Contains(out, []byte(`0;pwned`)) {
		t.Errorf("%s: the agent's strings are not shown (no escaped attack in the output):\n%.2000s", what, out)
	}
}

// hostileMatrix is a matrix of poisoned results of every kind, and an agent that was not run.
func hostileMatrix(t *testing.T) *matrix.Matrix {
	m := &matrix.Matrix{Schema: matrix.Schema, Version: "test", GeneratedAt: "2026-11-30T12:00:00Z"}
	for _, name := range []string{"check-claude", "check-codebuddy", "check-codex", "check-faults", "probe-crash", "probe-hang", "tap-codebuddy"} {
		m.Rows = append(m.Rows, poisoned(matrix.Row{ID: name, Source: "config", Launch: name, Result: v1(t, name)}))
	}
	turns := loadResult(t, filepath.Join("testdata", "turn-faults.result.json"))
	m.Rows = append(m.Rows, poisoned(matrix.Row{ID: "turns", Source: "config", Launch: "turns", Result: turns}))
	m.Rows = append(m.Rows, poisoned(matrix.Row{ID: "kimi", Source: "registry", Problem: "not found"}))
	return m
}

// TestHostileStrings (issue 11, F4): an agent whose every string carries terminal attacks
// reaches no text writer raw, at any width.
func TestHostileStrings(t *testing.T) {
	m := hostileMatrix(t)
	finding := m.Rows[3].Result.Findings[0]
	checks := poisoned([]conformance.Check{{ID: "a.b", Tier: report.TierInfo, Title: "t", Active: true}})
	agents := poisoned(testAgents)
	changes := poisoned(testChanges)
	docs := poisoned(testCatalogue(t))
	writers := map[string]func(io.Writer) error{
		"MatrixText":     func(w io.Writer) error { return render.MatrixText(w, m) },
		"MatrixMarkdown": func(w io.Writer) error { return render.MatrixMarkdown(w, m) },
		"ClientFindings": func(w io.Writer) error { return render.ClientFindings(w, m.Rows[3].Result.Findings) },
		"TapFinding":     func(w io.Writer) error { return render.TapFinding(w, finding) },
		"CheckList":      func(w io.Writer) error { return render.CheckList(w, checks) },
		"Agents":         func(w io.Writer) error { return render.Agents(w, testIndex+attack, agents) },
		"Diff":           func(w io.Writer) error { return render.Diff(w, changes) },
		"Catalogue":      func(w io.Writer) error { return render.Catalogue(w, docs) },
		"Message": func(w io.Writer) error {
			_, err := io.WriteString(w, render.Message("cannot read: "+attack)+"\n")
			return err
		},
		"Progress": func(w io.Writer) error {
			ids := make([]string, len(m.Rows))
			for i, r := range m.Rows {
				ids[i] = r.ID
			}
			p := render.NewProgress(w, ids)
			for i := range m.Rows {
				p.Update(matrix.Event{Index: i, ID: ids[i]})
				p.Update(matrix.Event{Index: i, ID: ids[i], Done: true, Row: &m.Rows[i]})
			}
			p.Finish()
			return nil
		},
	}
	for i, r := range m.Rows[:7] {
		writers[fmt.Sprintf("Text of row %d", i)] = func(w io.Writer) error { return render.Text(w, r.Result) }
	}
	for name, f := range writers {
		for _, width := range []int{0, 120, 80, 30} {
			for _, ansi := range []bool{false, true} {
				var b bytes.Buffer
				if err := f(&render.Screen{W: &b, Width: width, ANSI: ansi}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				out := b.Bytes()
				if ansi && name == "Progress" {
					out = ownANSI.ReplaceAll(out, nil)
				}
				assertInert(t, fmt.Sprintf("%s (width %d, ansi %v)", name, width, ansi), out)
			}
		}
	}
}

// TestHostileMarkdown (issue 11, F10): agent data in the Markdown matrix stays text in its
// cell: no raw control, no row split, and the characters that would start a link, an image,
// HTML or code are escaped.
func TestHostileMarkdown(t *testing.T) {
	m := hostileMatrix(t)
	var b bytes.Buffer
	if err := render.MatrixMarkdown(&b, m); err != nil {
		t.Fatal(err)
	}
	assertInert(t, "MatrixMarkdown", b.Bytes())
	var rows []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "|") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2+len(m.Rows) {
		t.Fatalf("%d table lines, want header, rule and %d rows:\n%s", len(rows), len(m.Rows), b.String())
	}
}
