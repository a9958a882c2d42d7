package emulator

import (
	"context"
	"sync"
)

// budget bounds the request body bytes the emulator holds at once. A request takes its
// share before its body is read and gives it back once the body is parsed and recorded;
// shares are granted in arrival order, so a large request is not starved by small ones
// arriving after it.
type budget struct {
	mu      sync.Mutex
	free    int64
	waiting []*waiter // in arrival order
}

// waiter is a request waiting for its share: ready is closed when it is granted.
type waiter struct {
	n     int64
	ready chan struct{}
}

func newBudget(n int64) *budget { return &budget{free: n} }

// acquire takes n bytes (at most the whole budget), waiting until they are free or ctx
// ends. onWait, when not nil, is called if it has to wait.
func (b *budget) acquire(ctx context.Context, n int64, onWait func()) error {
	b.mu.Lock()
	if len(b.waiting) == 0 && b.free >= n {
		b.free -= n
		b.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.waiting = append(b.waiting, w)
	b.mu.Unlock()
	if onWait != nil {
		onWait()
	}
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			b.free += n
			b.grant()
		default:
			for i, o := range b.waiting {
				if o == w {
					b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
					break
				}
			}
			b.grant() // the head may have changed
		}
		return ctx.Err()
	}
}

// release gives n bytes back.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.free += n
	b.grant()
	b.mu.Unlock()
}

// grant hands free bytes to the waiters at the head of the queue (under mu).
func (b *budget) grant() {
	for len(b.waiting) > 0 && b.free >= b.waiting[0].n {
		w := b.waiting[0]
		b.waiting = b.waiting[1:]
		b.free -= w.n
		close(w.ready)
	}
}
