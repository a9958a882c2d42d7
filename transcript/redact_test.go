package transcript

import (
	"os"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

func TestRedactor(t *testing.T) {
	r := NewRedactor([]string{"given-secret-value", `quo"te-secret`, "short"},
		[]string{"OPENAI_API_KEY=sk-env-0123456789abcdefXYZ", "GITHUB_TOKEN=ghp_tokenvalue123", "MY_SECRET_THING=hush-hush-hush", "PATH=/usr/bin:/bin", "HOME=/root"},
		[]string{"sessionAdmissionV2"})
	cases := []struct{ in, want string }{
		{"value given-secret-value here", "value [redacted] here"},
		{`{"x":"quo\"te-secret"}`, `{"x":"[redacted]"}`},
		{"key sk-env-0123456789abcdefXYZ and ghp_tokenvalue123", "key [redacted] and [redacted]"},
		{"hush-hush-hush", "[redacted]"},
		{"Authorization: Bearer abc.def.ghi-jkl", "Authorization: Bearer [redacted]"},
		{"an unrelated sk-live-ABCDEFGHIJKLMNOP1234 key", "an unrelated [redacted] key"},
		{`{"_meta":{"codebuddy.ai/accessToken":"tok\"en","accessToken":"x","authSession":"s","sessionAdmissionV2":"adm"}}`,
			`{"_meta":{"codebuddy.ai/accessToken":"[redacted]","accessToken":"[redacted]","authSession":"[redacted]","sessionAdmissionV2":"[redacted]"}}`},
		// A credential value of any JSON type is replaced whole, the rest of the line kept.
		{`{"a":1,"runtimeTransportCredential":{"nonce":"n","sig":[1,2]} ,"b":"x"}`, `{"a":1,"runtimeTransportCredential":"[redacted]" ,"b":"x"}`},
		{`{"sessionAdmissionV2": 12345}`, `{"sessionAdmissionV2": "[redacted]"}`},
		// Short values and ordinary environment values stay.
		{"short PATH /usr/bin:/bin /root", "short PATH /usr/bin:/bin /root"},
		{`{"accessTokenCount":3}`, `{"accessTokenCount":3}`},
	}
	for _, tc := range cases {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	if got := r.Strings([]string{"agent", "--key=given-secret-value"}); got[1] != "--key=[redacted]" {
		t.Errorf("argv = %q", got)
	}
}

func TestRedactorOnLog(t *testing.T) {
	r := NewRedactor([]string{"planted-secret-1"}, nil, nil)
	log := jsonrpc.NewLog()
	log.SetFilter(r.Frame)
	var seen []string
	log.Observe(func(f jsonrpc.Frame) { seen = append(seen, string(f.Raw)) })
	f := log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(`{"jsonrpc":"2.0","method":"m","params":{"k":"planted-secret-1"}}`)})
	if f.Msg == nil || string(f.Msg.Params) != `{"k":"[redacted]"}` {
		t.Errorf("decoded from the redacted line? %+v", f.Msg)
	}
	for _, s := range append(seen, string(log.Frames()[0].Raw)) {
		if strings.Contains(s, "planted") {
			t.Errorf("secret reached the log: %s", s)
		}
	}
}

func TestSecretArgs(t *testing.T) {
	got := SecretArgs([]string{"env", "GEMINI_API_KEY=AIzaSecret1234", "PATH=/bin", "agent", "--api-key=sk-flag-value", "--token", "tok-value-9876", "--verbose", "--model", "gpt"})
	want := []string{"AIzaSecret1234", "sk-flag-value", "tok-value-9876"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("SecretArgs = %q, want %q", got, want)
	}
}

func TestRecord(t *testing.T) {
	path := t.TempDir() + "/t.ndjson"
	red := NewRedactor([]string{"hunter2-secret"}, nil, nil)
	rec, err := Record(path, Header{Tool: "probe", Command: "agent --key hunter2-secret", Argv: []string{"agent", "--key", "hunter2-secret"}}, red)
	if err != nil {
		t.Fatal(err)
	}
	rec.Log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(`{"jsonrpc":"2.0","method":"m","params":{"k":"hunter2-secret"}}`)})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	h, frames, err := Read(f)
	if err != nil || len(frames) != 1 {
		t.Fatalf("read: %v, %d frames", err, len(frames))
	}
	if !h.Redacted || h.Start == "" || h.Command != "agent --key [redacted]" || h.Argv[2] != "[redacted]" {
		t.Errorf("header = %+v", h)
	}
	if strings.Contains(string(frames[0].Raw), "hunter2") {
		t.Errorf("secret in the transcript: %s", frames[0].Raw)
	}
	// Without a redactor nothing is changed, and the header says so.
	rec, _ = Record(path, Header{Tool: "probe", Command: "agent hunter2-secret"}, nil)
	rec.Close()
	f2, _ := os.Open(path)
	defer f2.Close()
	if h, _, _ := Read(f2); h.Redacted || h.Command != "agent hunter2-secret" {
		t.Errorf("unredacted header = %+v", h)
	}
}
