package cli

import (
	"context"
	"strings"

	"github.com/acpprobe/acpprobe/acptest"
)

// runAgent runs the reference agent on stdio (see acptest.Main for its flags).
func runAgent(ctx context.Context, args []string, stdio Stdio) int {
	return acptest.Main(ctx, args, stdio.In, stdio.Out, stdio.Err)
}

func checkPersona(name string) error {
	if _, ok := acptest.LookupPersona(name); !ok {
		return usagef("unknown persona %q (have %s)", name, strings.Join(acptest.PersonaNames(), ", "))
	}
	return nil
}
