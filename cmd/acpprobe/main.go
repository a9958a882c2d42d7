// Command acpprobe tells what an Agent Client Protocol agent supports, and where it departs
// from the protocol, from the live handshake and without spending model tokens.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/acpprobe/acpprobe/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
