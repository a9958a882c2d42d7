package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAllLines drains lr until it returns an error and returns the lines read and that error.
func readAllLines(t *testing.T, lr *LineReader) ([]Line, error) {
	t.Helper()
	var lines []Line
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("LineReader never ended")
		}
		l, err := lr.Next()
		if err != nil {
			if l.Size > 0 || len(l.Raw) > 0 {
				lines = append(lines, l)
			}
			return lines, err
		}
		lines = append(lines, l)
	}
}

func lineEqual(a, b Line) bool {
	return bytes.Equal(a.Raw, b.Raw) && a.Size == b.Size && a.Oversize == b.Oversize && a.Unterminated == b.Unterminated
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // longer than the 64 KiB bufio buffer
	tests := []struct {
		name  string
		in    string
		max   int
		want  []Line
		check func(t *testing.T, lines []Line)
	}{
		{
			name: "empty input",
			in:   "",
			max:  16,
			want: nil,
		},
		{
			name: "normal lines",
			in:   "abc\ndef\n",
			max:  16,
			want: []Line{{Raw: []byte("abc"), Size: 3}, {Raw: []byte("def"), Size: 3}},
		},
		{
			name: "empty lines",
			in:   "\n\na\n\n",
			max:  16,
			want: []Line{{Size: 0}, {Size: 0}, {Raw: []byte("a"), Size: 1}, {Size: 0}},
		},
		{
			name: "CRLF keeps the carriage return",
			in:   "a\r\nb\r\n\r\n",
			max:  16,
			want: []Line{{Raw: []byte("a\r"), Size: 2}, {Raw: []byte("b\r"), Size: 2}, {Raw: []byte("\r"), Size: 1}},
		},
		{
			name: "final unterminated line",
			in:   "a\nlast",
			max:  16,
			want: []Line{{Raw: []byte("a"), Size: 1}, {Raw: []byte("last"), Size: 4, Unterminated: true}},
		},
		{
			name: "only an unterminated line",
			in:   "x",
			max:  16,
			want: []Line{{Raw: []byte("x"), Size: 1, Unterminated: true}},
		},
		{
			name: "exactly max is kept whole",
			in:   strings.Repeat("a", 16) + "\n",
			max:  16,
			want: []Line{{Raw: []byte(strings.Repeat("a", 16)), Size: 16}},
		},
		{
			name: "one over max is oversize",
			in:   strings.Repeat("b", 17) + "\nnext\n",
			max:  16,
			want: []Line{
				{Raw: []byte(strings.Repeat("b", 17)), Size: 17, Oversize: true},
				{Raw: []byte("next"), Size: 4},
			},
		},
		{
			name: "exactly max unterminated",
			in:   strings.Repeat("c", 16),
			max:  16,
			want: []Line{{Raw: []byte(strings.Repeat("c", 16)), Size: 16, Unterminated: true}},
		},
		{
			name: "oversize keeps only the prefix, next line still read",
			in:   strings.Repeat("0123456789", 1000) + "\n{\"ok\":1}\n",
			max:  16,
			want: []Line{
				{Raw: []byte(strings.Repeat("0123456789", 1000)[:OversizePrefix]), Size: 10000, Oversize: true},
				{Raw: []byte(`{"ok":1}`), Size: 8},
			},
		},
		{
			name: "oversize unterminated at EOF",
			in:   "ok\n" + strings.Repeat("z", 5000),
			max:  16,
			want: []Line{
				{Raw: []byte("ok"), Size: 2},
				{Raw: []byte(strings.Repeat("z", OversizePrefix)), Size: 5000, Oversize: true, Unterminated: true},
			},
		},
		{
			name: "line longer than the bufio buffer but under max is kept whole",
			in:   long + "\n" + long,
			max:  1 << 20,
			want: []Line{
				{Raw: []byte(long), Size: int64(len(long))},
				{Raw: []byte(long), Size: int64(len(long)), Unterminated: true},
			},
		},
		{
			name: "line longer than the bufio buffer and over max",
			in:   long + "\nafter\n",
			max:  70 << 10,
			want: []Line{
				{Raw: []byte(long[:OversizePrefix]), Size: int64(len(long)), Oversize: true},
				{Raw: []byte("after"), Size: 5},
			},
		},
		{
			name: "invalid UTF-8 and NUL bytes kept byte-exact",
			in:   "\xff\xfe\x00a\x00\n\xc3\x28\x80\n",
			max:  16,
			want: []Line{
				{Raw: []byte("\xff\xfe\x00a\x00"), Size: 5},
				{Raw: []byte("\xc3\x28\x80"), Size: 3},
			},
		},
		{
			name: "BOM kept",
			in:   "\xef\xbb\xbf{}\n",
			max:  16,
			want: []Line{{Raw: []byte("\xef\xbb\xbf{}"), Size: 5}},
		},
	}
	readers := map[string]func(string) io.Reader{
		"whole":   func(s string) io.Reader { return strings.NewReader(s) },
		"onebyte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"dataerr": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
		"half":    func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for rname, mk := range readers {
			if rname == "onebyte" && len(tt.in) > 20000 {
				continue
			}
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				lines, err := readAllLines(t, NewLineReader(mk(tt.in), tt.max))
				if !errors.Is(err, io.EOF) {
					t.Fatalf("final error = %v, want io.EOF", err)
				}
				if len(lines) != len(tt.want) {
					t.Fatalf("got %d lines, want %d: %s", len(lines), len(tt.want), describeLines(lines))
				}
				for i := range lines {
					if !lineEqual(lines[i], tt.want[i]) {
						t.Errorf("line %d = %s, want %s", i, describeLine(lines[i]), describeLine(tt.want[i]))
					}
					if lines[i].Oversize && len(lines[i].Raw) > OversizePrefix {
						t.Errorf("line %d: oversize Raw has %d bytes, more than OversizePrefix", i, len(lines[i].Raw))
					}
				}
			})
		}
	}
}

func describeLines(ls []Line) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(describeLine(l))
		b.WriteString(" ")
	}
	return b.String()
}

func describeLine(l Line) string {
	raw := l.Raw
	if len(raw) > 40 {
		raw = raw[:40]
	}
	b, _ := json.Marshal(struct {
		Raw          string
		RawLen       int
		Size         int64
		Oversize     bool
		Unterminated bool
	}{string(raw), len(l.Raw), l.Size, l.Oversize, l.Unterminated})
	return string(b)
}

func TestLineReaderAfterEOFStaysEOF(t *testing.T) {
	lr := NewLineReader(strings.NewReader("a\n"), 16)
	if l, err := lr.Next(); err != nil || string(l.Raw) != "a" {
		t.Fatalf("first Next = %q, %v", l.Raw, err)
	}
	for i := 0; i < 3; i++ {
		l, err := lr.Next()
		if !errors.Is(err, io.EOF) {
			t.Fatalf("Next #%d err = %v, want io.EOF", i, err)
		}
		if l.Size != 0 || len(l.Raw) != 0 || l.Unterminated || l.Oversize {
			t.Fatalf("Next #%d at EOF returned a non-empty line %s", i, describeLine(l))
		}
	}
}

func TestLineReaderDefaultMax(t *testing.T) {
	// A line well above any small max but far below DefaultMaxLineSize stays whole when
	// max <= 0.
	line := strings.Repeat("q", 200<<10)
	for _, max := range []int{0, -1} {
		lr := NewLineReader(strings.NewReader(line+"\n"), max)
		if lr.max != DefaultMaxLineSize {
			t.Errorf("max %d: reader max = %d, want DefaultMaxLineSize", max, lr.max)
		}
		l, err := lr.Next()
		if err != nil {
			t.Fatalf("max %d: err %v", max, err)
		}
		if l.Oversize || l.Size != int64(len(line)) || string(l.Raw) != line {
			t.Errorf("max %d: got %s", max, describeLine(l))
		}
	}
}

// errAfterReader returns data, then err forever.
type errAfterReader struct {
	data []byte
	err  error
}

func (r *errAfterReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

var errBoom = errors.New("boom: read failed")

func TestLineReaderReadError(t *testing.T) {
	t.Run("partial line comes back with the error", func(t *testing.T) {
		lr := NewLineReader(&errAfterReader{data: []byte("one\ntwo\npart"), err: errBoom}, 16)
		for _, want := range []string{"one", "two"} {
			l, err := lr.Next()
			if err != nil || string(l.Raw) != want || l.Unterminated {
				t.Fatalf("Next = %s, %v; want %q", describeLine(l), err, want)
			}
		}
		l, err := lr.Next()
		if !errors.Is(err, errBoom) {
			t.Fatalf("err = %v, want errBoom", err)
		}
		if !lineEqual(l, Line{Raw: []byte("part"), Size: 4, Unterminated: true}) {
			t.Fatalf("partial line = %s", describeLine(l))
		}
		// The reader keeps failing with the same error and no data.
		l, err = lr.Next()
		if !errors.Is(err, errBoom) || l.Size != 0 {
			t.Fatalf("after error: %s, %v", describeLine(l), err)
		}
	})
	t.Run("error at a line boundary returns an empty line", func(t *testing.T) {
		lr := NewLineReader(&errAfterReader{data: []byte("one\n"), err: errBoom}, 16)
		if l, err := lr.Next(); err != nil || string(l.Raw) != "one" {
			t.Fatalf("Next = %s, %v", describeLine(l), err)
		}
		l, err := lr.Next()
		if !errors.Is(err, errBoom) {
			t.Fatalf("err = %v, want errBoom", err)
		}
		if l.Size != 0 || len(l.Raw) != 0 || l.Unterminated {
			t.Fatalf("line = %s, want empty", describeLine(l))
		}
	})
	t.Run("oversize partial line comes back with the error", func(t *testing.T) {
		data := strings.Repeat("p", 40)
		lr := NewLineReader(&errAfterReader{data: []byte(data), err: errBoom}, 16)
		l, err := lr.Next()
		if !errors.Is(err, errBoom) {
			t.Fatalf("err = %v, want errBoom", err)
		}
		if !lineEqual(l, Line{Raw: []byte(data), Size: 40, Oversize: true, Unterminated: true}) {
			t.Fatalf("line = %s", describeLine(l))
		}
	})
	t.Run("data and error in the same Read", func(t *testing.T) {
		lr := NewLineReader(iotest.DataErrReader(strings.NewReader("x\ny")), 16)
		l, err := lr.Next()
		if err != nil || string(l.Raw) != "x" {
			t.Fatalf("Next = %s, %v", describeLine(l), err)
		}
		l, err = lr.Next()
		// DataErrReader returns "y" together with io.EOF on the first Read, so the line is a
		// clean unterminated final line.
		if err != nil || !lineEqual(l, Line{Raw: []byte("y"), Size: 1, Unterminated: true}) {
			t.Fatalf("Next = %s, %v", describeLine(l), err)
		}
	})
}

func TestLineReaderRawIsNotReused(t *testing.T) {
	// Raw must be a copy: reading later lines must not overwrite earlier ones.
	in := "first\nsecond\nthird\n"
	lines, err := readAllLines(t, NewLineReader(strings.NewReader(in), 16))
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	want := []string{"first", "second", "third"}
	for i, l := range lines {
		if string(l.Raw) != want[i] {
			t.Errorf("line %d = %q, want %q", i, l.Raw, want[i])
		}
	}
}

func TestHasBOM(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"\xef\xbb\xbf{}", true},
		{"\xef\xbb\xbf", true},
		{"\xef\xbb", false},
		{"{}", false},
		{"", false},
		{" \xef\xbb\xbf{}", false},
	} {
		if got := HasBOM([]byte(tt.in)); got != tt.want {
			t.Errorf("HasBOM(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestFeed(t *testing.T) {
	lines, done := Feed(context.Background(), strings.NewReader("a\n\nb"), 0)
	var got []string
	for l := range lines {
		got = append(got, string(l.Raw))
		if len(got) == 3 {
			break
		}
	}
	if err := <-done; !errors.Is(err, io.EOF) || strings.Join(got, "|") != "a||b" {
		t.Errorf("got %q, end %v", got, err)
	}
}
