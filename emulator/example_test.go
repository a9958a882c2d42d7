package emulator_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/record"
)

// Start an emulator, point an agent at it with its profile, and read what reached the model.
func ExampleStart() {
	requests := make(chan record.ModelRequestInfo, 16)
	srv, err := emulator.Start(context.Background(), emulator.Options{
		Script:    emulator.Text("hi"),
		OnRequest: func(r record.ModelRequestInfo) { requests <- r },
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	profiles, err := emulator.LoadProfiles()
	if err != nil {
		panic(err)
	}
	profile, _, ok := profiles.Match(emulator.Keys{AgentName: "@zed-industries/claude-agent-acp"})
	if !ok {
		panic("no profile")
	}
	home, _ := os.MkdirTemp("", "home")
	defer os.RemoveAll(home)
	setup, err := profile.Setup(emulator.ValuesFor(srv, home))
	if err != nil {
		panic(err)
	}
	_ = setup.Write()
	env := setup.Environ([]string{"PATH=/usr/bin", "HOME=" + home})
	_ = env // the agent's environment: exec.Cmd.Env

	// Here the agent would run a prompt turn; this request plays its part.
	body := `{"model":"claude-sonnet-4-6","max_tokens":10,"messages":[{"role":"user","content":"say hi"}]}`
	resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	r := <-requests
	fmt.Println(profile.Name, setup.Dialect)
	fmt.Println(r.Method, r.Path, r.Dialect, r.Model, r.LastUserText)
	fmt.Println(strings.Contains(string(answer), `"text":"hi"`))
	// Output:
	// claude-agent-acp anthropic
	// POST /v1/messages anthropic claude-sonnet-4-6 say hi
	// true
}
