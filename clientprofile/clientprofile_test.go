package clientprofile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
)

// TestBuiltinProfiles decodes every embedded profile and checks what each declares: the facts
// the agents key on (research notes Q2) must be in the profile that stands for that host.
func TestBuiltinProfiles(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"minimal", "zed", "jetbrains", "gateway", "full"}) {
		t.Fatalf("Names() = %v", got)
	}
	want := map[string][]string{
		"minimal": {},
		"gateway": {"auth._meta.gateway"},
		"zed": {"_meta.terminal-auth", "_meta.terminal_output", "auth.terminal", "elicitation.form", "elicitation.url",
			"fs.readTextFile", "fs.writeTextFile", "session.configOptions.boolean", "terminal"},
		"jetbrains": {"_meta.jetbrains.air", "fs.readTextFile", "fs.writeTextFile", "terminal"},
		"full": {"_meta.jetbrains.air", "_meta.terminal-auth", "_meta.terminal_output", "auth._meta.gateway", "auth.terminal",
			"elicitation.form", "elicitation.url", "fs.readTextFile", "fs.writeTextFile", "session.compaction",
			"session.configOptions.boolean", "session.notices", "terminal"},
	}
	for _, name := range Names() {
		p, ok := Get(name)
		if !ok || p.Name != name {
			t.Fatalf("Get(%q) = %+v, %v", name, p, ok)
		}
		if got := p.Declared(); !slices.Equal(got, want[name]) {
			t.Errorf("%s declares %q, want %q", name, got, want[name])
		}
	}
	// AIR's declaration must be an object: claude-agent-acp ignores air:true.
	jb, _ := Get("jetbrains")
	var caps struct {
		Meta struct {
			JetBrains struct {
				Air json.RawMessage `json:"air"`
			} `json:"jetbrains"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(jb.ClientCapabilities, &caps); err != nil || !strings.HasPrefix(string(caps.Meta.JetBrains.Air), "{") {
		t.Errorf("jetbrains' _meta.jetbrains.air = %s (%v), want an object", caps.Meta.JetBrains.Air, err)
	}
	if string(Gateway()) != `{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"_meta":{"gateway":true}}}` {
		t.Errorf("Gateway() = %s", Gateway())
	}
}

// TestAnswersSayHarmless checks that every capability of the richest profile the agent could
// ask the client to use has the answer the probe gives instead.
func TestAnswersSayHarmless(t *testing.T) {
	full, _ := Get("full")
	got := map[string]string{}
	for _, a := range full.Answers() {
		got[a.Capability] = a.Answer
	}
	for c, prefix := range map[string]string{"fs.readTextFile": "refused", "fs.writeTextFile": "refused", "terminal": "refused",
		"elicitation.form": "declined", "elicitation.url": "declined", "auth._meta.gateway": "never used"} {
		if !strings.HasPrefix(got[c], prefix) {
			t.Errorf("answer for %s = %q, want %s…", c, got[c], prefix)
		}
	}
	if m, _ := Get("minimal"); len(m.Answers()) != 0 {
		t.Errorf("minimal has answers %v", m.Answers())
	}
}

// TestLoadUserProfile attacks the validation of a profile a user hands acpprobe: each bad file
// is refused with an error that names what is wrong.
func TestLoadUserProfile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("myhost.json", `{"name":"myhost","description":"d","clientInfo":{"name":"myhost","version":"1.0"},
		"clientCapabilities":{"fs":{"readTextFile":true},"elicitation":{"url":{}}},"sources":[{"fact":"all","source":"our code"}]}`)
	p, err := Load(good)
	if err != nil {
		t.Fatalf("Load(good): %v", err)
	}
	if p.Name != "myhost" || p.File != good || p.ClientInfo.Version != "1.0" || string(p.ClientCapabilities) != `{"fs":{"readTextFile":true},"elicitation":{"url":{}}}` {
		t.Errorf("Load(good) = %+v", p)
	}
	for _, c := range []struct{ name, body, want string }{
		{"unknown-key.json", `{"name":"a","clientCapabilities":{},"sources":[{"fact":"f","source":"s"}],"capabilities":{}}`, `unknown field "capabilities"`},
		{"bad-name.json", `{"name":"My Host","clientCapabilities":{},"sources":[{"fact":"f","source":"s"}]}`, `name "My Host"`},
		{"builtin-name.json", `{"name":"zed","clientCapabilities":{},"sources":[{"fact":"f","source":"s"}]}`, `is a built-in profile's`},
		{"no-sources.json", `{"name":"a","clientCapabilities":{}}`, `sources:`},
		{"empty-source.json", `{"name":"a","clientCapabilities":{},"sources":[{"fact":"f"}]}`, `sources[0]`},
		{"caps-array.json", `{"name":"a","clientCapabilities":[],"sources":[{"fact":"f","source":"s"}]}`, `want a JSON object`},
		{"caps-schema.json", `{"name":"a","clientCapabilities":{"terminal":"yes"},"sources":[{"fact":"f","source":"s"}]}`, `/terminal`},
		{"info.json", `{"name":"a","clientInfo":{"name":"a"},"clientCapabilities":{},"sources":[{"fact":"f","source":"s"}]}`, `clientInfo needs`},
		{"two.json", `{"name":"a","clientCapabilities":{},"sources":[{"fact":"f","source":"s"}]} {}`, `more than one`},
		{"not-json.json", `name: a`, `not a client profile`},
	} {
		_, err := Load(write(c.name, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.want)
		}
	}
	big := write("big.json", `{"name":"a","description":"`+strings.Repeat("x", MaxFileSize)+`"}`)
	if _, err := Load(big); err == nil {
		t.Error("a file over MaxFileSize was read")
	}
	if _, err := Load("nosuch"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "minimal, zed, jetbrains, gateway, full") {
		t.Errorf("Load(nosuch) = %v, want ErrUnknown listing the built-in profiles", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestLoadList(t *testing.T) {
	ps, err := LoadList("minimal, zed,jetbrains")
	if err != nil || len(ps) != 3 || ps[1].Name != "zed" {
		t.Fatalf("LoadList = %v, %v", ps, err)
	}
	for list, want := range map[string]string{"zed,zed": "named twice", "zed,": "empty profile name", "zed,nope": "unknown client profile"} {
		if _, err := LoadList(list); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadList(%q) = %v, want %q", list, err, want)
		}
	}
}

// TestMinimalIsTheProbeDefault keeps the minimal profile what the engine declares when it is
// given no capabilities.
func TestMinimalIsTheProbeDefault(t *testing.T) {
	m, _ := Get(Default)
	if string(m.ClientCapabilities) != string(probe.MinimalClientCapabilities) || m.ClientInfo != nil {
		t.Errorf("minimal = %s %+v, probe's default %s", m.ClientCapabilities, m.ClientInfo, probe.MinimalClientCapabilities)
	}
}

// TestSectionIsWhatWasSent: the report's client section says what the recorded initialize
// declared — a zed run that turn's gateway route sent with auth._meta.gateway declares it too
// (before, the section was the profile's alone and hid the gateway declaration).
func TestSectionIsWhatWasSent(t *testing.T) {
	zed := mustGet("zed")
	sent := WithGateway(zed.ClientCapabilities)
	params, _ := json.Marshal(map[string]any{"protocolVersion": 1, "clientCapabilities": sent})
	frames := []jsonrpc.Frame{{Dir: jsonrpc.DirClient, Msg: &jsonrpc.Message{ID: json.RawMessage(`1`), HasMethod: true, Method: "initialize", Params: params}}}
	got := zed.Section(frames)
	want := append([]string{"_meta.terminal-auth", "_meta.terminal_output", "auth._meta.gateway"}, zed.Declared()[2:]...)
	if got.Profile != "zed" || !slices.Equal(got.Declared, want) {
		t.Errorf("section = %+v, want declared %q", got, want)
	}
	if d := zed.Section(nil).Declared; !slices.Equal(d, zed.Declared()) {
		t.Errorf("without frames: %q", d)
	}
	if g := WithGateway(nil); string(g) != string(Gateway()) {
		t.Errorf("WithGateway(nil) = %s", g)
	}
	full := mustGet("full")
	if !slices.Equal(Profile{ClientCapabilities: WithGateway(full.ClientCapabilities)}.Declared(), full.Declared()) {
		t.Error("WithGateway changed what full declares, which has the gateway already")
	}
}
