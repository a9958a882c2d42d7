package turn_test

import (
	"context"
	"os"

	"github.com/acpprobe/acpprobe/acptest"
)

// acptestMain runs this test binary as the reference agent (minimal persona: no profile
// matches it).
func acptestMain() int {
	return acptest.Main(context.Background(), []string{"--persona", "minimal"}, os.Stdin, os.Stdout, os.Stderr)
}
