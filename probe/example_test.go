package probe_test

import (
	"context"
	"fmt"

	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
)

// Drive the built-in reference agent in-process and derive the facts of its record. (For the
// whole report, findings included, use the root package: acpprobe.Run.)
func ExampleDrive() {
	log, err := probe.Drive(context.Background(), probe.Options{
		Launcher: acptest.Launcher(acptest.Config{Persona: "gemini"}),
	})
	if err != nil {
		panic(err) // only unusable options end up here
	}
	r := derive.Connection(context.Background(), record.New(log.Frames()), nil)
	fmt.Println("protocol:", *r.ProtocolVersion)
	fmt.Println("agent:", r.AgentInfo.Name)
	fmt.Println("audio prompts:", r.Capabilities.PromptCapabilities.Audio)
	fmt.Println("auth:", r.Auth.Status)
	fmt.Println("set_config_option:", r.Methods["session/set_config_option"].Support)
	fmt.Println("session/load:", r.Methods["session/load"].Support, *r.Methods["session/load"].Code)
	// Output:
	// protocol: 1
	// agent: acptest-gemini
	// audio prompts: true
	// auth: authenticated
	// set_config_option: unsupported
	// session/load: supported -32602
}
