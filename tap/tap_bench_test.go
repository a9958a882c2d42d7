package tap

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/transport"
)

// The echo agent: cat writes back every line it reads, as soon as it reads it.
var echoAgent = transport.Command{Argv: []string{"cat"}}

// tapEnv makes the test binary a tap process in front of the echo agent, on its own stdio,
// as an editor runs acpprobe tap: the benchmarks measure the tap both in the editor's process
// (where pprof sees it) and as a process of its own (as deployed).
const tapEnv = "ACPPROBE_BENCH_AS_TAP"

func TestMain(m *testing.M) {
	switch os.Getenv(tapEnv) {
	case "copy":
		// The floor of any proxy process: copy both ways, log nothing.
		a, err := echoAgent.Launch(context.Background(), nil)
		if err != nil {
			os.Exit(3)
		}
		go func() { _, _ = io.Copy(a.Stdin(), os.Stdin); a.Stdin().Close() }()
		_, _ = io.Copy(os.Stdout, a.Stdout())
		os.Exit(0)
	case "1":
		exit, err := Run(context.Background(), Options{Agent: echoAgent, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Log: jsonrpc.NewLog(), Grace: time.Second})
		if err != nil || exit.Code == nil {
			os.Exit(3)
		}
		os.Exit(*exit.Code)
	}
	os.Exit(m.Run())
}

// benchMessages are what an editor and an agent exchange during a prompt turn: mostly
// session/update chunks, some tool calls and a request (about 300 bytes on average).
var benchMessages = func() [][]byte {
	var out [][]byte
	for i := range 20 {
		var s string
		switch i % 10 {
		case 3:
			s = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_%06d","title":"Read main.go","kind":"read","status":"pending","locations":[{"path":"/work/repo/cmd/main.go","line":42}],"rawInput":{"file_path":"/work/repo/cmd/main.go"}}}}`, i)
		case 7:
			s = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"Why does the loader return early when the file is missing?"}]}}`, i)
		default:
			s = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d: the function returns early when the file is missing, so the caller never sees the error"}}}}`, i)
		}
		out = append(out, append([]byte(s), '\n'))
	}
	return out
}()

// peer is one editor's view of an echo agent: write a line, read it back.
type peer struct {
	w    io.Writer
	r    *bufio.Reader
	stop func()
}

// direct starts the echo agent and talks to it over its own pipes: the baseline.
func direct(b *testing.B) *peer { return launch(b, echoAgent) }

// tapProcess starts this test binary as a tap process in front of the echo agent.
func tapProcess(b *testing.B) *peer { return selfAs(b, "1") }

// copyProcess starts this test binary as a plain copying proxy in front of the echo agent:
// what any proxy process costs, logging nothing.
func copyProcess(b *testing.B) *peer { return selfAs(b, "copy") }

func selfAs(b *testing.B, mode string) *peer {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	return launch(b, transport.Command{Argv: []string{exe}, Env: []string{tapEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}})
}

func launch(b *testing.B, c transport.Command) *peer {
	a, err := c.Launch(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	p := &peer{w: a.Stdin(), r: bufio.NewReaderSize(a.Stdout(), 64<<10)}
	p.stop = func() {
		a.Stdin().Close()
		_, _ = io.Copy(io.Discard, p.r) // to the EOF, so that the teardown finds the output drained
		a.Shutdown(context.Background(), transport.Patient(time.Second))
	}
	return p
}

// tapInProcess runs tap.Run in this process in front of the echo agent, with OS pipes on the
// editor side.
func tapInProcess(b *testing.B) *peer {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := Run(context.Background(), Options{Agent: echoAgent, Stdin: inR, Stdout: outW, Stderr: io.Discard, Log: jsonrpc.NewLog(), Grace: time.Second}); err != nil {
			b.Error(err)
		}
		outW.Close()
	}()
	return &peer{w: inW, r: bufio.NewReaderSize(outR, 64<<10), stop: func() { inW.Close(); <-done; inR.Close(); outR.Close() }}
}

// roundTrip writes msg and waits until the agent's echo of it has come back.
func (p *peer) roundTrip(b *testing.B, msg []byte) time.Duration {
	start := time.Now()
	if _, err := p.w.Write(msg); err != nil {
		b.Fatal(err)
	}
	if _, err := p.r.ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// stream writes n messages while reading their echoes, and returns when the last has come
// back: the throughput of a busy session (each message crosses the tap twice, and is logged
// and decoded twice).
func (p *peer) stream(b *testing.B, n int) {
	errc := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := p.w.Write(benchMessages[i%len(benchMessages)]); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for range n {
		if _, err := p.r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}

func avgSize() int64 {
	var n int
	for _, m := range benchMessages {
		n += len(m)
	}
	return int64(n / len(benchMessages))
}

// BenchmarkThroughput streams messages editor → agent → editor, directly (the baseline),
// through a plain copying proxy process (the floor of any proxy) and through the tap, in this
// process and as a process of its own; one op is one message there and back. msgs/s is the
// target's measure.
func BenchmarkThroughput(b *testing.B) {
	for _, c := range []struct {
		name  string
		start func(*testing.B) *peer
	}{{"direct", direct}, {"copy-process", copyProcess}, {"tap-inprocess", tapInProcess}, {"tap-process", tapProcess}} {
		b.Run(c.name, func(b *testing.B) {
			p := c.start(b)
			defer p.stop()
			p.stream(b, 100) // warm up
			b.SetBytes(avgSize())
			b.ReportAllocs()
			b.ResetTimer()
			p.stream(b, b.N)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkAddedLatency measures the round trip of one message at a time to an echo agent,
// through a proxy (the tap, or the plain copying proxy) and directly, interleaved (one op =
// one of each), and reports the percentiles of both and what the proxy adds: its percentile
// minus the direct one, and the percentile of the per-op differences (paired).
func BenchmarkAddedLatency(b *testing.B) {
	for _, c := range []struct {
		name  string
		start func(*testing.B) *peer
	}{{"copy-process", copyProcess}, {"tap-inprocess", tapInProcess}, {"tap-process", tapProcess}} {
		b.Run(c.name, func(b *testing.B) { addedLatency(b, c.start) })
	}
}

func addedLatency(b *testing.B, start func(*testing.B) *peer) {
	viaTap, viaPipe := start(b), direct(b)
	defer viaTap.stop()
	defer viaPipe.stop()
	for i := range 200 { // warm up
		viaTap.roundTrip(b, benchMessages[i%len(benchMessages)])
		viaPipe.roundTrip(b, benchMessages[i%len(benchMessages)])
	}
	var tapRTT, pipeRTT []time.Duration
	b.ResetTimer()
	for i := range b.N {
		msg := benchMessages[i%len(benchMessages)]
		if i%2 == 0 {
			tapRTT = append(tapRTT, viaTap.roundTrip(b, msg))
			pipeRTT = append(pipeRTT, viaPipe.roundTrip(b, msg))
		} else {
			pipeRTT = append(pipeRTT, viaPipe.roundTrip(b, msg))
			tapRTT = append(tapRTT, viaTap.roundTrip(b, msg))
		}
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	paired := make([]time.Duration, len(tapRTT))
	for i := range tapRTT {
		paired[i] = tapRTT[i] - pipeRTT[i]
	}
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50", 0.50}, {"p99", 0.99}} {
		t, p := percentile(tapRTT, q.q), percentile(pipeRTT, q.q)
		b.ReportMetric(us(p), q.name+"-direct-µs")
		b.ReportMetric(us(t), q.name+"-tap-µs")
		b.ReportMetric(us(t-p), q.name+"-added-µs")
		b.ReportMetric(us(percentile(paired, q.q)), q.name+"-paired-added-µs")
	}
}

func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}
