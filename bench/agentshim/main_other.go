//go:build !linux

// Command agentshim needs Linux (waitid WNOWAIT and child subreapers); elsewhere the driver
// runs without it.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "agentshim: Linux only")
	os.Exit(2)
}
