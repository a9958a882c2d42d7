package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"testing"
	"testing/iotest"
)

// fuzzMax maps a fuzzed byte to a small maximum line size (1..64) so that oversize lines are
// common.
func fuzzMax(m uint8) int { return int(m%64) + 1 }

func FuzzLineReader(f *testing.F) {
	f.Add([]byte(""), uint8(15))
	f.Add([]byte("\n"), uint8(15))
	f.Add([]byte("a\nb\n"), uint8(15))
	f.Add([]byte("a\r\nb\r\n"), uint8(0))
	f.Add([]byte("no newline at the end"), uint8(3))
	f.Add([]byte("0123456789abcdef\n0123456789abcdefg\n"), uint8(15))
	f.Add([]byte("\xef\xbb\xbf{\"jsonrpc\":\"2.0\"}\n\x00\xff\n\n"), uint8(7))
	f.Add(bytes.Repeat([]byte("x"), 5000), uint8(63))
	f.Add(append(bytes.Repeat([]byte("y"), 5000), "\nz\n"...), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, m uint8) {
		max := fuzzMax(m)
		lines, err := collectLines(NewLineReader(bytes.NewReader(in), max))
		if err != nil {
			t.Fatalf("Next returned %v, want io.EOF at the end", err)
		}
		checkLines(t, in, max, lines)

		// Reading one byte at a time must give exactly the same lines.
		lines2, err := collectLines(NewLineReader(iotest.OneByteReader(bytes.NewReader(in)), max))
		if err != nil {
			t.Fatalf("one-byte reader: %v", err)
		}
		if len(lines2) != len(lines) {
			t.Fatalf("one-byte reader gave %d lines, want %d", len(lines2), len(lines))
		}
		for i := range lines {
			if !lineEqual(lines[i], lines2[i]) {
				t.Fatalf("line %d differs with a one-byte reader: %s vs %s", i, describeLine(lines2[i]), describeLine(lines[i]))
			}
		}
	})
}

// collectLines reads lines until io.EOF; any other error is returned.
func collectLines(lr *LineReader) ([]Line, error) {
	var lines []Line
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			if l.Size != 0 || len(l.Raw) != 0 {
				return lines, errors.New("io.EOF returned with a non-empty line")
			}
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
		lines = append(lines, l)
	}
}

// checkLines verifies that lines account for every byte of in: each line's Size plus one
// newline per terminated line adds up to len(in), Raw is the line (or its prefix when
// oversize), and when nothing was oversize the lines rebuild the input exactly.
func checkLines(t *testing.T, in []byte, max int, lines []Line) {
	t.Helper()
	var rebuilt bytes.Buffer
	anyOversize := false
	off := int64(0)
	newlines := int64(0)
	var sizes int64
	for i, l := range lines {
		if l.Size < 0 || off+l.Size > int64(len(in)) {
			t.Fatalf("line %d: Size %d past the input (offset %d, len %d)", i, l.Size, off, len(in))
		}
		whole := in[off : off+l.Size]
		if bytes.IndexByte(whole, '\n') >= 0 {
			t.Fatalf("line %d contains a newline", i)
		}
		if l.Oversize {
			anyOversize = true
			if l.Size <= int64(max) {
				t.Fatalf("line %d: Oversize with Size %d <= max %d", i, l.Size, max)
			}
			if want := min(int(l.Size), OversizePrefix); len(l.Raw) != want {
				t.Fatalf("line %d: oversize Raw has %d bytes, want %d", i, len(l.Raw), want)
			}
			if !bytes.Equal(l.Raw, whole[:len(l.Raw)]) {
				t.Fatalf("line %d: oversize Raw is not the prefix of the line", i)
			}
		} else {
			if l.Size > int64(max) {
				t.Fatalf("line %d: Size %d > max %d but not Oversize", i, l.Size, max)
			}
			if int64(len(l.Raw)) != l.Size || !bytes.Equal(l.Raw, whole) {
				t.Fatalf("line %d: Raw %q is not the line %q", i, l.Raw, whole)
			}
		}
		rebuilt.Write(l.Raw)
		sizes += l.Size
		off += l.Size
		if l.Unterminated {
			if i != len(lines)-1 {
				t.Fatalf("line %d is unterminated but not the last", i)
			}
			if l.Size == 0 {
				t.Fatalf("line %d: an empty unterminated line", i)
			}
		} else {
			if off >= int64(len(in)) || in[off] != '\n' {
				t.Fatalf("line %d: not followed by a newline in the input", i)
			}
			rebuilt.WriteByte('\n')
			off++
			newlines++
		}
	}
	if off != int64(len(in)) {
		t.Fatalf("lines cover %d bytes of %d", off, len(in))
	}
	if sizes != int64(len(in))-newlines {
		t.Fatalf("sizes add up to %d, want %d", sizes, int64(len(in))-newlines)
	}
	if want := int64(bytes.Count(in, []byte("\n"))); newlines != want {
		t.Fatalf("%d terminated lines, input has %d newlines", newlines, want)
	}
	if !anyOversize && !bytes.Equal(rebuilt.Bytes(), in) {
		t.Fatalf("rebuilt input %q != %q", rebuilt.Bytes(), in)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{}}}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","result":{},"id":"x"}`,
		`{"jsonrpc":"2.0","id":1e0,"error":"boom"}`,
		`{"id":{},"method":1,"error":{"code":1.5}}`,
		`[{"jsonrpc":"2.0","method":"m"}]`,
		"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
		`{"jsonrpc":"2.0","method":"a\u0000\ud800b","params":"<&>"}`,
		"{\"method\":\"\xff\",\"id\":-0}",
		`not json`,
		``,
		`{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Decode(raw)
		if err != nil {
			if m != nil {
				t.Fatalf("Decode returned a message with an error")
			}
			return
		}
		kind := m.Kind()
		_ = m.VersionOK()
		if e := m.Err(); e != nil {
			_ = e.Error()
			if !bytes.Equal(e.Raw, m.Error) {
				t.Fatalf("Err().Raw %q != Error %q", e.Raw, m.Error)
			}
		}
		if m.ID != nil {
			IDKey(m.ID)
			if !json.Valid(m.ID) {
				t.Fatalf("ID %q is not valid JSON", m.ID)
			}
		}
		for name, r := range map[string]json.RawMessage{"jsonrpc": m.JSONRPC, "params": m.Params, "result": m.Result, "error": m.Error} {
			if r != nil && !json.Valid(r) {
				t.Fatalf("%s %q is not valid JSON", name, r)
			}
		}
		if kind != Request {
			return
		}
		line, err := EncodeRequest(42, m.Method, m.Params)
		if err != nil {
			t.Fatalf("EncodeRequest(%q, %q): %v", m.Method, m.Params, err)
		}
		m2, err := Decode(line)
		if err != nil {
			t.Fatalf("Decode(EncodeRequest) %s: %v", line, err)
		}
		if m2.Kind() != Request || m2.Method != m.Method || !m2.VersionOK() {
			t.Fatalf("re-encoded request %s: kind %v method %q, want method %q", line, m2.Kind(), m2.Method, m.Method)
		}
		if key, ok := IDKey(m2.ID); !ok || key != "n:42" {
			t.Fatalf("re-encoded id key %q, %v", key, ok)
		}
		if !sameJSON(m.Params, m2.Params) {
			t.Fatalf("params changed: %q -> %q", m.Params, m2.Params)
		}
	})
}

// sameJSON reports whether a and b hold the same JSON value (both absent counts as same).
func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var va, vb any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if da.Decode(&va) != nil || db.Decode(&vb) != nil {
		return false
	}
	ea, _ := json.Marshal(va)
	eb, _ := json.Marshal(vb)
	return bytes.Equal(ea, eb)
}

func FuzzIDKey(f *testing.F) {
	f.Add([]byte(`1`), int64(1), "1")
	f.Add([]byte(`1.0`), int64(0), "")
	f.Add([]byte(`1e0`), int64(-1), "x")
	f.Add([]byte(`"abc"`), int64(math.MaxInt64), "abc")
	f.Add([]byte(`null`), int64(math.MinInt64), "null")
	f.Add([]byte(`{"a":1}`), int64(1<<53), "\xff")
	f.Add([]byte(`-0.0`), int64(-(1 << 53)), "\u2028")
	f.Add([]byte(`1e400`), int64(42), "")
	f.Fuzz(func(t *testing.T, raw []byte, n int64, s string) {
		// Never panics on arbitrary bytes; ok keys have a known prefix.
		if key, ok := IDKey(raw); ok {
			if key != "null" && !bytes.HasPrefix([]byte(key), []byte("n:")) && !bytes.HasPrefix([]byte(key), []byte("s:")) {
				t.Fatalf("IDKey(%q) = %q", raw, key)
			}
		} else if key != "" {
			t.Fatalf("IDKey(%q) = %q with ok false", raw, key)
		}

		want := "n:" + strconv.FormatInt(n, 10)
		b, _ := json.Marshal(n)
		if key, ok := IDKey(b); !ok || key != want {
			t.Fatalf("IDKey(%s) = %q, %v; want %q", b, key, ok, want)
		}
		if key, ok := IDKey(append(append([]byte(" \t"), b...), "\r\n"...)); !ok || key != want {
			t.Fatalf("IDKey with whitespace around %s = %q, %v", b, key, ok)
		}
		// Integral values written as floats match the integer, while exactly representable.
		if n > -(1<<53) && n < 1<<53 {
			for _, form := range []string{strconv.FormatInt(n, 10) + ".0", strconv.FormatInt(n, 10) + "e0", strconv.FormatInt(n, 10) + "0e-1"} {
				if key, ok := IDKey(json.RawMessage(form)); !ok || key != want {
					t.Fatalf("IDKey(%s) = %q, %v; want %q", form, key, ok, want)
				}
			}
		}
		// A string id keys by its decoded text and never equals a number's key.
		sb, _ := json.Marshal(s)
		var decoded string
		if err := json.Unmarshal(sb, &decoded); err != nil {
			t.Fatal(err)
		}
		key, ok := IDKey(sb)
		if !ok || key != "s:"+decoded {
			t.Fatalf("IDKey(%s) = %q, %v; want %q", sb, key, ok, "s:"+decoded)
		}
		if key == want {
			t.Fatalf("string id %s and number %d share key %q", sb, n, key)
		}
	})
}

func FuzzConn(f *testing.F) {
	f.Add([]byte(""), uint8(63))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}\n"), uint8(63))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fs/read_text_file\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"x\"}\n"), uint8(63))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":2}"), uint8(10))
	f.Add([]byte("garbage\n\n\r\n\xef\xbb\xbf{}\n[1,2]\n\x00"), uint8(3))
	f.Add(bytes.Repeat([]byte("{\"id\":1,\"method\":\"m\"}\n"), 20), uint8(20))
	f.Fuzz(func(t *testing.T, in []byte, m uint8) {
		max := fuzzMax(m)
		c := NewConn(bytes.NewReader(in), io.Discard, ConnOptions{MaxLineSize: max})
		var seen []int64
		c.Log().Observe(func(fr Frame) { seen = append(seen, fr.Seq) })
		c.Start()
		<-c.Done()
		c.Wait()
		if err := c.ReadErr(); err != nil {
			t.Fatalf("ReadErr = %v for a bytes.Reader", err)
		}
		frames := c.Log().Frames()
		var lines []Line
		var requests int
		for i, fr := range frames {
			if fr.Seq != int64(i+1) || seen[i] != fr.Seq {
				t.Fatalf("frame %d has Seq %d (observed %d)", i, fr.Seq, seen[i])
			}
			switch fr.Dir {
			case DirAgent:
				lines = append(lines, Line{Raw: fr.Raw, Size: fr.Size, Oversize: fr.Oversize, Unterminated: fr.Unterminated})
				if !fr.Oversize && (fr.Msg == nil) == (fr.DecodeErr == nil) {
					t.Fatalf("frame %d: Msg %v and DecodeErr %v", i, fr.Msg, fr.DecodeErr)
				}
				if fr.Msg != nil && fr.Msg.Kind() == Request {
					requests++
				}
			case DirClient:
				// Our answers to the peer's requests (no Handler: method not found).
				if fr.Msg == nil || fr.Msg.Kind() != Response {
					t.Fatalf("frame %d: we wrote %q", i, fr.Raw)
				}
				if e := fr.Msg.Err(); e == nil || e.Code != CodeMethodNotFound {
					t.Fatalf("frame %d: answer %q", i, fr.Raw)
				}
			default:
				t.Fatalf("frame %d has direction %q", i, fr.Dir)
			}
		}
		// Every byte of the input is accounted for by the agent frames.
		checkLines(t, in, max, lines)
		if answers := len(frames) - len(lines); answers != requests {
			t.Fatalf("%d requests got %d answers", requests, answers)
		}
	})
}

// FuzzDecodeFastPath: the member-slicing fast path of Decode agrees with the general decoding
// on every valid object it accepts.
func FuzzDecodeFastPath(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[1,"}"]}}`))
	f.Add([]byte(`{ "id" : "a\"b" , "result" : null , "id": 2 }`))
	f.Add([]byte(`{"\u0069d":1}`))
	f.Add([]byte("{\"method\":\"\xff\"}"))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		trimmed := bytes.Trim(raw, jsonSpace)
		if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
			return
		}
		got, ok := decodeTop(trimmed)
		if !ok {
			return
		}
		want, err := decodeMap(trimmed)
		if err != nil {
			t.Fatalf("%q: %v", trimmed, err)
		}
		same := func(a, b json.RawMessage) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
		if !same(got.JSONRPC, want.JSONRPC) || !same(got.ID, want.ID) || !same(got.Params, want.Params) || !same(got.Result, want.Result) ||
			!same(got.Error, want.Error) || got.Method != want.Method || got.HasMethod != want.HasMethod {
			t.Fatalf("%q: fast path %+v, general %+v", trimmed, got, want)
		}
	})
}
