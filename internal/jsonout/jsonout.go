// Package jsonout writes acpprobe's JSON documents (the result of a probe, a matrix, the
// files of matrix --out, the tap's findings): indented where the document's Go types give it a
// shape, compact inside what an agent sent, so that the output stays proportional to the input
// however deep an agent nests a value, and with every character a terminal would act on or
// hide written as an escape. internal/render and matrix both write through it.
package jsonout

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Indent is v as JSON followed by a newline. The document's own structure (what the Go types
// of v say: structs, maps, slices) is indented by two spaces, as json.MarshalIndent would;
// every value whose shape the types do not know — json.RawMessage (what an agent sent,
// verbatim), interfaces, other marshalers — is written compact, on the line of its key. So the
// output is proportional to v however deep an agent nests: json.MarshalIndent spends about
// d²/2 spaces on a value nested d deep (162 MB for 54 KB nested 9000 deep). Strings are also
// written safe for a terminal (see Hidden). The field names and the values are exactly those
// of json.Marshal.
func Indent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	x := &indenter{in: bytes.TrimRight(buf.Bytes(), "\n"), out: make([]byte, 0, buf.Len()*2)}
	x.value(reflect.TypeOf(v), 0)
	return append(x.out, '\n'), nil
}

// Line is v as one line of compact JSON followed by a newline (NDJSON), with strings safe for
// a terminal (see Hidden).
func Line(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	x := &indenter{in: b, out: make([]byte, 0, len(b)+1)}
	x.verbatim()
	return append(x.out, '\n'), nil
}

// indenter rewrites the compact JSON in, a value of a known Go type, into out: indented
// where the type is a struct, map or slice, verbatim below any other type. Each byte of in is
// read once, and each is written with at most the indentation of the type's own depth.
type indenter struct {
	in  []byte
	pos int
	out []byte
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// structure is the type whose shape t's JSON has (pointers followed), or nil when its JSON
// is not built from its fields and elements (an interface, a json.RawMessage or any other
// marshaler).
func structure(t reflect.Type) reflect.Type {
	for t != nil {
		if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
			reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
			return nil
		}
		switch t.Kind() {
		case reflect.Pointer:
			t = t.Elem()
		case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
			return t
		default:
			return nil
		}
	}
	return nil
}

func (x *indenter) value(t reflect.Type, depth int) {
	t = structure(t)
	c := x.in[x.pos]
	switch {
	case t == nil:
		x.verbatim()
	case c == '{' && t.Kind() == reflect.Struct:
		fields := jsonFields(t)
		x.container('}', depth, func(key string) reflect.Type { return fields[key] })
	case c == '{' && t.Kind() == reflect.Map:
		x.container('}', depth, func(string) reflect.Type { return t.Elem() })
	case c == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		x.container(']', depth, func(string) reflect.Type { return t.Elem() })
	default: // null, or a []byte as base64
		x.verbatim()
	}
}

// container writes the object or array at pos, one member a line; typeOf gives the type of a
// member from its key (an array's elements have the key "").
func (x *indenter) container(end byte, depth int, typeOf func(key string) reflect.Type) {
	x.out = append(x.out, x.in[x.pos])
	x.pos++
	if x.in[x.pos] == end {
		x.out = append(x.out, end)
		x.pos++
		return
	}
	for {
		x.newline(depth + 1)
		key := ""
		if end == '}' {
			start := x.pos
			x.str()
			key = jsonKey(x.in[start:x.pos])
			x.pos++ // ':'
			x.out = append(x.out, ':', ' ')
		}
		x.value(typeOf(key), depth+1)
		if x.in[x.pos] == ',' {
			x.out = append(x.out, ',')
			x.pos++
			continue
		}
		x.newline(depth)
		x.out = append(x.out, end)
		x.pos++
		return
	}
}

func (x *indenter) newline(depth int) {
	x.out = append(x.out, '\n')
	for range depth {
		x.out = append(x.out, ' ', ' ')
	}
}

// verbatim copies the value at pos as it is (compact), its strings made safe.
func (x *indenter) verbatim() {
	nest := 0
	for x.pos < len(x.in) {
		switch c := x.in[x.pos]; c {
		case '"':
			x.str()
		case '{', '[':
			nest++
			x.out = append(x.out, c)
			x.pos++
		case '}', ']', ',':
			if nest == 0 {
				return
			}
			if c != ',' {
				nest--
			}
			x.out = append(x.out, c)
			x.pos++
		default:
			x.out = append(x.out, c)
			x.pos++
		}
		if nest == 0 && x.pos < len(x.in) && strings.IndexByte(",}]", x.in[x.pos]) >= 0 {
			return
		}
	}
}

// str copies the string at pos, writing as \u escapes the characters a terminal would act on
// or hide that encoding/json leaves as they are (jsonSafe).
func (x *indenter) str() {
	x.out = append(x.out, '"')
	x.pos++
	for {
		c := x.in[x.pos]
		switch {
		case c == '"':
			x.out = append(x.out, c)
			x.pos++
			return
		case c == '\\':
			x.out = append(x.out, c, x.in[x.pos+1])
			x.pos += 2
		case c < utf8.RuneSelf && c != 0x7f:
			x.out = append(x.out, c)
			x.pos++
		default:
			r, n := utf8.DecodeRune(x.in[x.pos:])
			if jsonSafe(r) {
				x.out = append(x.out, x.in[x.pos:x.pos+n]...)
			} else if r > 0xffff {
				r -= 0x10000
				x.out = fmt.Appendf(x.out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				x.out = fmt.Appendf(x.out, `\u%04x`, r)
			}
			x.pos += n
		}
	}
}

// jsonSafe says whether r may appear as itself in a JSON string acpprobe prints: not DEL, a
// C1 control or an invisible character (Hidden; encoding/json already escapes the C0 controls
// and the line separators).
func jsonSafe(r rune) bool { return r != 0x7f && (r < 0x80 || !Hidden(r)) }

// Hidden says whether r (not ASCII) is a control or an invisible character that acpprobe never
// prints as itself: a C1 control, a Unicode format character (category Cf: bidi overrides,
// zero-width characters, the BOM, tag characters), a line or paragraph separator, or another
// default-ignorable character. JSON output writes it as a \u escape, and render.Clean as a Go
// escape.
func Hidden(r rune) bool {
	return r < 0xa0 || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point)
}

// jsonKey is the name of an object key, from its JSON string.
func jsonKey(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b[1 : len(b)-1])
	}
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields maps the JSON names of struct t's fields to their types, as encoding/json names
// them: the json tag's name or the field's, fields of untagged embedded structs promoted, a
// shallower field winning over a deeper one.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	depthOf := map[string]int{}
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				et := f.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct && depth < 8 {
					walk(et, depth+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if d, ok := depthOf[name]; ok && d <= depth {
				continue
			}
			fields[name], depthOf[name] = f.Type, depth
		}
	}
	walk(t, 0)
	fieldCache.Store(t, fields)
	return fields
}
