package cli_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// turnHWM runs acpprobe turn --json against the reference agent padding every result with pad
// bytes, and returns acpprobe's own peak resident set and its output. The peak is read from
// /proc/PID/status (VmHWM) while it runs, and once more as its output arrives (the result is
// rendered by then): acpprobe is a subreaper, so its rusage's maxrss would be its reaped
// agent's when that is larger, and the kernel gives no event for a new high-water mark.
func turnHWM(t *testing.T, pad int) (hwm int64, out []byte) {
	t.Helper()
	cmd := exec.Command("acpprobe", "turn", "--json", "--timeout", "300s", "--turn-timeout", "40s", "--grace", "200ms",
		"--", "acpprobe", "agent", "--persona", "model", "--huge-answers", strconv.Itoa(pad))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	status := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"
	read := func() {
		b, err := os.ReadFile(status)
		if err != nil {
			return // exited
		}
		for line := range strings.Lines(string(b)) {
			if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(kb), " kB"), 10, 64); err == nil {
					hwm = max(hwm, n<<10)
				}
			}
		}
	}
	type result struct {
		out []byte
		err error
	}
	got := make(chan result, 1)
	first := make(chan struct{})
	go func() {
		br := bufio.NewReader(stdout)
		_, err := br.Peek(1)
		close(first)
		var buf bytes.Buffer
		if err == nil {
			_, err = io.Copy(&buf, br)
		}
		got <- result{buf.Bytes(), err}
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-tick.C:
			read()
		case <-first:
			read() // the result is rendered: the last high-water mark before the exit
			first = nil
		case r := <-got:
			if r.err != nil {
				t.Fatal(r.err)
			}
			out, waiting = r.out, false
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("turn --huge-answers %d: %v\n%s", pad, err, stderr.String())
	}
	return hwm, out
}

// TestTurnHugeAnswersWithinBudget (issue 24): the record's budget holds for turn as for probe.
// An agent that pads every result (initialize, each session/new, each prompt's answer) with
// 8 MB of _meta sends acpprobe about 200 MB of answers in one run, with 30 MB about 750 MB;
// acpprobe's own peak resident set stays within 6 times the record's 64 MiB budget above what
// a run with unpadded answers costs (8 MB: 352 MiB for 26 MiB, before 621 MiB, each kept
// answer held twice, its line and a copy for its decoded message; 30 MB: 359 MB for 23 MB,
// before 462 MB, the copies of a line that large and the collector's headroom over them,
// which the soft memory limit, boundHeap, takes back), and the output holds each padded value
// once: the initialize and session/new results in raw, 2 × the padding.
func TestTurnHugeAnswersWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("turn runs of about two minutes")
	}
	if raceDetector {
		t.Skip("the race detector's shadow memory is several times the heap: the bound is on the plain build, which scripts/test.sh runs it on")
	}
	plainHWM, plainOut := turnHWM(t, 0)
	for _, pad := range []int{8_000_000, 30_000_000} {
		hugeHWM, hugeOut := turnHWM(t, pad)
		t.Logf("unpadded answers: %d MiB, %d KiB of JSON; answers padded with %d bytes: %d MiB, %d KiB of JSON",
			plainHWM>>20, len(plainOut)>>10, pad, hugeHWM>>20, len(hugeOut)>>10)
		if budget := int64(64 << 20); hugeHWM-plainHWM > 6*budget {
			t.Errorf("answers padded with %d bytes cost acpprobe %d MiB more than unpadded ones: want at most 6 times the record's budget (%d MiB)",
				pad, (hugeHWM-plainHWM)>>20, 6*budget>>20)
		}
		if pads := bytes.Count(hugeOut, bytes.Repeat([]byte("x"), 1<<16)); pads == 0 {
			t.Fatalf("the output has no padded value:\n%.500s", hugeOut)
		}
		if more := len(hugeOut) - len(plainOut); more < 2*pad-pad/8 || more > 2*pad+pad/8 {
			t.Errorf("the output grew by %d bytes for answers padded with %d: want the two raw results (initialize, session/new) once each", more, pad)
		}
	}
}
