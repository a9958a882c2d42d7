package derive

import (
	"context"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Deep is what the --deep connection, which asked for an unsupported version, shows.
type Deep struct {
	Asked  int // the version it asked for
	Result *report.Result
}

// deriveDeep states the facts of the --deep connection (nil without one).
func deriveDeep(ctx context.Context, frames []jsonrpc.Frame, cat *extensions.Catalogue) *Deep {
	if frames == nil {
		return nil
	}
	dx := record.New(frames)
	return &Deep{Asked: dx.Spawn().ProtocolVersion, Result: Connection(ctx, dx, cat)}
}
