package record

import "testing"

func TestTailBuffer(t *testing.T) {
	tb := NewTailBuffer(5)
	for _, s := range []string{"ab", "cd", "ef", "", "0123456789", "x"} {
		tb.Write([]byte(s))
	}
	if got := string(tb.Bytes()); got != "6789x" {
		t.Errorf("tail = %q", got)
	}
	if tb.Total() != 17 {
		t.Errorf("total = %d", tb.Total())
	}
}
