package cli

import (
	"os"
	"runtime/debug"

	"github.com/acpprobe/acpprobe/record"
)

// heapPerRecord is the Go heap one record may grow acpprobe to before the collector works
// harder: the record keeps record.DefaultBudget whole, and the promise (README, Reliability) is
// at most 6 times that budget in all. Five budgets and a little for the rest leave room for
// what is not heap (stacks, the binary) under the sixth.
const heapPerRecord = 5*record.DefaultBudget + 16<<20

// boundHeap sets the runtime's soft memory limit for a command that holds records at once
// (the matrix one per agent it runs in parallel), unless the user set GOMEMLIMIT. A soft
// limit only makes the collector run sooner near it; it never fails an allocation. Without
// it, the collector let the heap grow to twice what is live, and a turn against an agent
// whose every answer is 30 MB peaked at 462 MB.
func boundHeap(records int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(int64(max(records, 1)) * heapPerRecord)
}
