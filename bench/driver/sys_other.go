//go:build !linux

package main

import (
	"errors"
	"runtime"
)

func becomeSubreaper() error { return errors.New("child subreapers are Linux only") }

// maxrssKB converts ru_maxrss to KiB (bytes on macOS, KiB on the BSDs).
func maxrssKB(v int64) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return v / 1024
	}
	return v
}
