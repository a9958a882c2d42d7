package probe_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transcript"
)

// An answer that arrives after its budget ran out is late, never a success: the report says
// initialize_timeout (the agent answered late, raise --startup-timeout), not a crash at
// session/new (issue 13, item 1).
func TestLateInitializeIsATimeout(t *testing.T) {
	r, frames := run(t, acptest.Config{Persona: "minimal", Faults: acptest.Faults{SlowStart: 700 * time.Millisecond}}, func(o *probe.Options) {
		o.StartupTimeout = 200 * time.Millisecond
		o.Grace = 2 * time.Second
	})
	late := false
	x := record.New(frames)
	if ex := x.First("initialize"); ex != nil && ex.Answer != nil {
		late = ex.Answer.Seq > x.EventSeq(record.Timeout.Kind)
	}
	if !late {
		t.Fatal("the scenario did not happen: no initialize answer after the timeout (the agent should answer during the teardown)")
	}
	if r.Error == nil || r.Error.Code != report.ErrInitializeTimeout || r.Error.Stage != record.StageInitialize {
		t.Fatalf("error = %+v, want initialize_timeout at initialize", r.Error)
	}
	for _, want := range []string{"answered", "after", "--startup-timeout"} {
		if !strings.Contains(r.Error.Message, want) {
			t.Errorf("message %q does not say %q", r.Error.Message, want)
		}
	}
	if r.ProtocolVersion != nil || string(r.Raw.Initialize) != "null" {
		t.Errorf("a late answer was taken as the handshake: version %v raw %s", r.ProtocolVersion, r.Raw.Initialize)
	}
}

// supportsConfigOption is unknown (null) unless session/set_config_option was decided (issue
// 13, item 2).
func TestSupportsConfigOptionUnknownWhenNotProbed(t *testing.T) {
	r, _ := run(t, acptest.Config{Persona: "claude"}, func(o *probe.Options) { o.SkipMethods = true })
	if r.SupportsConfigOption != nil {
		t.Errorf("supportsConfigOption = %v with --no-methods, want null", *r.SupportsConfigOption)
	}
	r, _ = run(t, acptest.Config{Persona: "claude", Faults: acptest.Faults{HangOn: "session/new"}}, func(o *probe.Options) {
		o.Timeout = time.Second
	})
	if r.SupportsConfigOption != nil {
		t.Errorf("supportsConfigOption = %v after a session/new timeout, want null", *r.SupportsConfigOption)
	}
}

// agentCapabilities.auth is a stable v1 capability: it is capabilities.auth, never an
// experimental one (issue 13, item 4).
func TestAuthCapabilityIsStable(t *testing.T) {
	r, _ := run(t, acptest.Config{Persona: "codex"}, nil)
	if !r.Capabilities.Auth.Logout {
		t.Errorf("capabilities.auth = %+v, want logout", r.Capabilities.Auth)
	}
	if r.Capabilities.Experimental != (report.Experimental{}) {
		t.Errorf("experimental = %+v, want nothing: codex advertises no unstable capability", r.Capabilities.Experimental)
	}
}

// A record without its closing events was cut short: the report says so with its own error
// code, and invents nothing after the cut (issue 13, item 5).
func TestTruncatedRecord(t *testing.T) {
	_, frames, err := transcript.ReadFile(filepath.Join("..", "testdata", "v1", "check-claude.ndjson"), transcript.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{3, len(frames) / 2} {
		r := derive.Connection(context.Background(), record.New(frames[:cut]), nil)
		if r.Error == nil || r.Error.Code != report.ErrTruncated {
			t.Errorf("cut at %d: error = %+v, want truncated", cut, r.Error)
			continue
		}
		if !strings.Contains(r.Error.Message, "cut short") {
			t.Errorf("cut at %d: message %q", cut, r.Error.Message)
		}
		for m, s := range r.Methods {
			if strings.Contains(s.Message, "no answer within") {
				t.Errorf("cut at %d: %s says %q, which the record cannot show", cut, m, s.Message)
			}
		}
	}
	// The whole record is not truncated.
	if r := derive.Connection(context.Background(), record.New(frames), nil); r.Error != nil {
		t.Errorf("whole record: error %+v", r.Error)
	}
}

// When the client called authenticate, the evidence says so (issue 13, item 5).
func TestAuthEvidenceAfterAuthenticate(t *testing.T) {
	log := jsonrpc.NewLog()
	record.Spawn.Emit(log, record.SpawnInfo{Argv: []string{"a"}, ProtocolVersion: 1})
	for _, l := range []struct {
		dir jsonrpc.Dir
		raw string
	}{
		{jsonrpc.DirClient, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`},
		{jsonrpc.DirAgent, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[{"id":"key","name":"Key"}]}}`},
		{jsonrpc.DirClient, `{"jsonrpc":"2.0","id":2,"method":"authenticate","params":{"methodId":"key"}}`},
		{jsonrpc.DirAgent, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{jsonrpc.DirClient, `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`},
		{jsonrpc.DirAgent, `{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s"}}`},
	} {
		log.Append(jsonrpc.Frame{Dir: l.dir, Raw: []byte(l.raw)})
	}
	record.Done.Emit(log, record.None{})
	r := derive.Connection(context.Background(), record.New(log.Frames()), nil)
	ev := strings.Join(r.Auth.Evidence, " | ")
	if strings.Contains(ev, "without authenticate") || !strings.Contains(ev, "after authenticate") || !strings.Contains(ev, "key") {
		t.Errorf("evidence %q", ev)
	}
}

// An agent that writes on stderr in the last stretch before the startup budget ends is said
// to be busy, and --startup-timeout is named; one that logged only when the request came is
// not.
func TestBusyNearTheDeadline(t *testing.T) {
	frames := func(stderrAt time.Duration) []jsonrpc.Frame {
		req, _ := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		return []jsonrpc.Frame{
			{Seq: 1, Dir: jsonrpc.DirEvent, Kind: string(record.Spawn.Kind), Raw: []byte(`{"argv":["a"],"startupTimeoutMs":1000}`)},
			{Seq: 2, Dir: jsonrpc.DirClient, At: 10 * time.Millisecond, Msg: req},
			{Seq: 3, Dir: jsonrpc.DirStderr, At: stderrAt, Raw: []byte("loading…\n")},
			{Seq: 4, Dir: jsonrpc.DirEvent, At: 1010 * time.Millisecond, Kind: string(record.Timeout.Kind), Raw: []byte(`{"stage":"initialize"}`)},
			{Seq: 5, Dir: jsonrpc.DirEvent, At: 1100 * time.Millisecond, Kind: string(record.Done.Kind)},
		}
	}
	busy := derive.Connection(context.Background(), record.New(frames(900*time.Millisecond)), nil)
	quiet := derive.Connection(context.Background(), record.New(frames(20*time.Millisecond)), nil)
	if busy.Error == nil || !strings.Contains(busy.Error.Message, "busy") || !strings.Contains(busy.Error.Message, "--startup-timeout") {
		t.Errorf("busy agent: %+v", busy.Error)
	}
	if quiet.Error == nil || strings.Contains(quiet.Error.Message, "busy") {
		t.Errorf("quiet agent: %+v", quiet.Error)
	}
}

// An agent that answers unknown methods and invalid params alike (-32603, no data) cannot be
// read from invalid params: those methods are asked again on a made-up session, and one that
// still answers like the unknown method is unknown, not supported (issue 12, item 2).
func TestDetectionFallsBackWhenAmbiguous(t *testing.T) {
	r, frames := run(t, acptest.Config{Persona: "claude", Faults: acptest.Faults{GenericErrors: true}}, nil)
	asked := map[string]int{}
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request {
			asked[f.Msg.Method]++
		}
	}
	for m, want := range map[string]report.Support{
		"session/load": report.Supported, "session/set_mode": report.Supported, "session/delete": report.Unknown,
	} {
		s := r.Methods[m]
		if s.Support != want || s.DetectedBy != report.DetectedByNonexistentSession || asked[m] != 2 {
			t.Errorf("%s = %+v after %d requests, want %s by the fallback", m, s, asked[m], want)
		}
	}
	// session/list has no session to make up: its fallback reads the cwd, and answers.
	if s := r.Methods["session/list"]; s.Support != report.Supported {
		t.Errorf("session/list = %+v", s)
	}
	// A normal agent is decided by invalid params alone: one request per method.
	r, frames = run(t, acptest.Config{Persona: "claude"}, nil)
	n := 0
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == "session/load" {
			n++
		}
	}
	if n != 1 || r.Methods["session/load"].DetectedBy != report.DetectedByInvalidParams {
		t.Errorf("session/load asked %d times, %+v", n, r.Methods["session/load"])
	}
}

// The permission policy: cancel answers "cancelled" (no decision); reject selects the
// reject_once option the agent offered.
func TestPermissionPolicy(t *testing.T) {
	answer := func(policy probe.Permission) string {
		_, frames := run(t, acptest.Config{Persona: "claude", Faults: acptest.Faults{ClientRequests: []string{"session/request_permission"}}},
			func(o *probe.Options) { o.Permission = policy })
		x := record.New(frames)
		for _, ex := range x.Calls(jsonrpc.DirAgent) {
			if ex.Method() == "session/request_permission" && ex.Answer != nil {
				return string(ex.Answer.Msg.Result)
			}
		}
		t.Fatalf("%s: the permission request was not answered", policy)
		return ""
	}
	if got := answer(probe.PermissionCancel); got != `{"outcome":{"outcome":"cancelled"}}` {
		t.Errorf("cancel policy answered %s", got)
	}
	if got := answer(probe.PermissionReject); got != `{"outcome":{"optionId":"reject","outcome":"selected"}}` {
		t.Errorf("reject policy answered %s", got)
	}
}

// With Authenticate set, authenticate is called with that method after initialize and before
// session/new, and the evidence says so.
func TestAuthenticateBeforeSessionNew(t *testing.T) {
	r, frames := run(t, acptest.Config{Persona: "gemini"}, func(o *probe.Options) { o.Authenticate = &probe.Authenticate{MethodID: "gemini-api-key"} })
	var order []string
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request {
			order = append(order, f.Msg.Method)
		}
	}
	if len(order) < 3 || order[0] != "initialize" || order[1] != "authenticate" || order[2] != "session/new" {
		t.Errorf("request order %v", order)
	}
	if ev := strings.Join(r.Auth.Evidence, " "); !strings.Contains(ev, "after authenticate (methodId gemini-api-key") {
		t.Errorf("evidence %q", ev)
	}
}

// The result keeps acp-probe's field meanings, so that its consumers read acpprobe's output
// (issue 13, item 16): models are session/new's declared availableModels (for display, ids
// set_config_option may refuse), modelConfig points at the model config option whose values
// set_config_option accepts (null without one), and every field of acp-probe's
// AgentProbeResult is present. Checked against the raw answers, decoded here independently.
func TestAcpProbeFieldSemantics(t *testing.T) {
	for _, persona := range []string{"claude", "gemini"} {
		t.Run(persona, func(t *testing.T) {
			r, _ := run(t, acptest.Config{Persona: persona}, nil)
			var raw struct {
				Models struct {
					AvailableModels []struct {
						ModelID     string `json:"modelId"`
						Name        string `json:"name"`
						Description string `json:"description"`
					} `json:"availableModels"`
				} `json:"models"`
				ConfigOptions []struct {
					ID       string `json:"id"`
					Category string `json:"category"`
					Options  []struct {
						Value string `json:"value"`
					} `json:"options"`
				} `json:"configOptions"`
			}
			if err := json.Unmarshal(r.Raw.NewSession, &raw); err != nil {
				t.Fatalf("raw newSession: %v", err)
			}
			if persona == "claude" && len(raw.Models.AvailableModels) == 0 {
				t.Fatal("the claude persona declares no models: the test needs some")
			}
			declared, got := []string{}, []string{}
			for _, m := range raw.Models.AvailableModels {
				declared = append(declared, m.ModelID+"|"+m.Name+"|"+m.Description)
			}
			for _, m := range r.Models {
				got = append(got, m.ID+"|"+m.Name+"|"+m.Description)
			}
			if !slices.Equal(got, declared) {
				t.Errorf("models %q, want session/new's availableModels %q", got, declared)
			}
			var values []string
			hasOption := false
			for _, o := range raw.ConfigOptions {
				if o.ID == "model" || o.Category == "model" {
					hasOption = true
					for _, v := range o.Options {
						values = append(values, v.Value)
					}
				}
			}
			switch {
			case !hasOption && r.ModelConfig != nil:
				t.Errorf("modelConfig %+v, want null: no model config option", r.ModelConfig)
			case hasOption && (r.ModelConfig == nil || !slices.Equal(r.ModelConfig.Values, values)):
				t.Errorf("modelConfig %+v, want the model option's values %q", r.ModelConfig, values)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"agent", "protocolVersion", "agentInfo", "capabilities", "authMethods", "models",
				"modes", "configOptions", "reasoning", "modelConfig", "supportsConfigOption", "raw"} {
				if _, ok := doc[key]; !ok {
					t.Errorf("acp-probe's field %q is missing", key)
				}
			}
			var models []map[string]any
			if err := json.Unmarshal(doc["models"], &models); err != nil {
				t.Fatal(err)
			}
			for _, m := range models {
				for k := range m {
					if k != "id" && k != "name" && k != "description" {
						t.Errorf("models item key %q: acp-probe's models are {id, name?, description?}", k)
					}
				}
			}
		})
	}
}
