//go:build !(linux || darwin || freebsd || netbsd || dragonfly)

package render

import "os"

// terminalWidth: on this system acpprobe does not ask; f is taken for a file (no width, no
// ANSI).
func terminalWidth(*os.File) (int, bool) { return 0, false }
