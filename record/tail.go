package record

import "sync"

// DefaultStderrTail is how many trailing bytes of an agent's stderr are kept (64 KiB): by the
// transport while the agent runs, and in a result derived from a record.
const DefaultStderrTail = 64 << 10

// TailBuffer keeps the last N bytes written to it and counts everything. It is safe for
// concurrent use.
type TailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

// NewTailBuffer keeps the last max bytes.
func NewTailBuffer(max int) *TailBuffer { return &TailBuffer{max: max} }

// Write appends p, dropping the oldest bytes beyond the limit. It never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// Bytes returns a copy of the kept tail.
func (t *TailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}

// Total is the number of bytes ever written.
func (t *TailBuffer) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}
