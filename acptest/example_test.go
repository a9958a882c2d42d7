package acptest_test

import (
	"context"
	"fmt"
	"os"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
)

// The model persona runs a real prompt turn against the model emulator, which its
// acptest-model profile points it at.
func ExampleLauncher_model() {
	ctx := context.Background()
	requests := make(chan record.ModelRequestInfo, 8)
	srv, err := emulator.Start(ctx, emulator.Options{Script: emulator.Text("Hello."), OnRequest: func(r record.ModelRequestInfo) { requests <- r }})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	home, _ := os.MkdirTemp("", "home")
	defer os.RemoveAll(home)
	profiles, _ := emulator.LoadProfiles()
	profile, _, _ := profiles.Match(emulator.Keys{AgentName: "acptest-model"})
	setup, _ := profile.Setup(emulator.ValuesFor(srv, home))
	env := setup.Environ([]string{"HOME=" + home})

	agent, err := acptest.Launcher(acptest.Config{Persona: "model", Env: env}).Launch(ctx, nil)
	if err != nil {
		panic(err)
	}
	defer agent.Shutdown(ctx, transport.Ladder{})
	conn := jsonrpc.NewConn(agent.Stdout(), agent.Stdin(), jsonrpc.ConnOptions{})
	conn.Start()
	call := func(method string, params any) acp.Object {
		m, err := conn.Call(ctx, method, params)
		if err != nil || m.Err() != nil {
			panic(fmt.Sprint(method, err, m.Err()))
		}
		return acp.ParseObject(m.Result)
	}
	call(acp.MethodInitialize, map[string]any{"protocolVersion": 1})
	sid := call(acp.MethodSessionNew, map[string]any{"cwd": home, "mcpServers": []any{}}).String("sessionId")
	call(acp.MethodSetConfigOption, map[string]any{"sessionId": sid, "configId": "model", "value": "acptest-large"})
	answer := call(acp.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{map[string]string{"type": "text", "text": "hi"}}})

	r := <-requests
	fmt.Println(answer.String("stopReason"))
	fmt.Println(r.Path, r.Model, r.Tools, r.LastUserText)
	// Output:
	// end_turn
	// /v1/messages acptest-large [Write Read] hi
}
