package turn_test

import (
	"context"
	"os"
	"strings"

	"github.com/acpprobe/acpprobe/acptest"
)

// acptestMain runs this test binary as the reference agent, with the arguments in
// ACPPROBE_TURN_AGENT (space-separated: "--persona minimal", "--persona model
// --ignore-cancel" …).
func acptestMain() int {
	args := strings.Fields(os.Getenv("ACPPROBE_TURN_AGENT"))
	return acptest.Main(context.Background(), args, os.Stdin, os.Stdout, os.Stderr)
}
