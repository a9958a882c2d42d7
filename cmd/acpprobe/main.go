// Command acpprobe tells what an Agent Client Protocol agent supports, and where it departs
// from the protocol, from the live handshake and without spending model tokens.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/acpprobe/acpprobe/internal/cli"
	"github.com/acpprobe/acpprobe/sandbox"
)

func main() {
	// The sandbox's namespace helper (--isolate=net) is this program, re-executed: it must
	// take over before anything else runs.
	sandbox.Init()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
