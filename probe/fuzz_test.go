package probe_test

import (
	"context"
	"github.com/acpprobe/acpprobe/acp"
	"io"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/transport"
)

// FuzzAgentOutput feeds arbitrary bytes as everything an agent writes: whatever they are, the
// probe returns a result within its budget and never panics.
func FuzzAgentOutput(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"sessionId\":\"s\"}}\n"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{\"sessionCapabilities\":{\"close\":{}}}}}\n{\"id\":2,\"result\":{\"sessionId\":\"s\",\"configOptions\":[{\"id\":\"model\",\"options\":[{\"group\":1,\"options\":[7]}]}]}}\n"))
	f.Add([]byte("\xef\xbb\xbf{\"id\":1,\"error\":{\"code\":\"x\"}}\n\x00\xff\n"))
	f.Add([]byte("{\"id\":1.0,\"result\":null}\n{\"id\":1,\"result\":{\"protocolVersion\":\"1\"}}"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"fs/read_text_file\",\"params\":{}}\n{\"method\":\"session/update\",\"params\":{\"update\":5}}\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		agent := transport.Pipe{Name: "fuzz", Serve: func(ctx context.Context, in io.Reader, w, _ io.Writer) error {
			go io.Copy(io.Discard, in)
			_, err := w.Write(out)
			return err
		}}
		r, err := driveAndDerive(context.Background(), probe.Options{
			Launcher: agent, Cwd: "/", Timeout: 2 * time.Second, RequestTimeout: 200 * time.Millisecond,
			Grace: 50 * time.Millisecond, MaxLineSize: 256,
		})
		if err != nil {
			t.Fatal(err)
		}
		if r.Exit == nil || len(r.Methods) != len(acp.ProbedMethods) {
			t.Fatalf("incomplete result: %+v", r)
		}
	})
}
