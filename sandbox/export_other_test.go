//go:build unix && !linux

package sandbox

// WaitWalk does nothing: WatchHome's snapshot is taken before it returns.
func WaitWalk(*HomeWatch) {}

// PastTick does nothing: WatchHome compares snapshots, not times.
func PastTick() {}
