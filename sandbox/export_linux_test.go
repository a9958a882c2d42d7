package sandbox

import "golang.org/x/sys/unix"

// WaitWalk waits for w's walk to be over: every directory then has its watch.
func WaitWalk(w *HomeWatch) { <-w.walked }

// OnWatchStart makes f run after each later WatchHome reads its clock and before its walk
// begins (the window in which a change precedes every watch), until the test ends.
func OnWatchStart(f func()) (restore func()) {
	afterT0 = f
	return func() { afterT0 = nil }
}

// NoWatchesLeft makes each later watch fail as it does when max_user_watches is reached.
func NoWatchesLeft() (restore func()) {
	addWatch = func(int, string, uint32) (int, error) { return -1, unix.ENOSPC }
	return func() { addWatch = unix.InotifyAddWatch }
}

// KeepEvents bounds the names a watch's drain keeps before it calls it an overflow.
func KeepEvents(n int) (restore func()) {
	maxEvents = n
	return func() { maxEvents = DefaultMaxEntries }
}

// OnListed makes f run with each directory a later walk has listed, before it looks into the
// directories it holds.
func OnListed(f func(label string)) (restore func()) {
	onListed = f
	return func() { onListed = nil }
}

// Overflowed tells whether w's events overflowed (or were more than it keeps).
func Overflowed(w *HomeWatch) bool { return w.overflow }

// Unwatched is how many directories w's walk could not watch.
func Unwatched(w *HomeWatch) int { return len(w.unwatched) }

// PastTick returns once the coarse clock has passed the time it was called at: what was made
// before is then older than a watch started after (the coarse clock lags the time the kernel
// stamps a change with by up to two ticks, and a change in that lag counts as after).
func PastTick() {
	var now, coarse unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &now)
	for coarse.Nano() <= now.Nano() {
		_ = unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &coarse)
	}
}
