package transcript

import (
	"os"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

func TestRedactor(t *testing.T) {
	r := NewRedactor([]string{"given-secret-value", `quo"te-secret`, "abc", "wxyz"},
		[]string{"OPENAI_API_KEY=sk-env-0123456789abcdefXYZ", "GITHUB_TOKEN=ghp_tokenvalue123", "MY_SECRET_THING=hush-hush-hush", "PATH=/usr/bin:/bin", "HOME=/root",
			"GH_PAT=patvalue-0001", "AWS_ACCESS_KEY_ID=AKIDVALUE0002", "AWS_SECRET_ACCESS_KEY=awssecret0003", "DEPLOY_KEY=deploykey0004", "SHORT_TOKEN=12345"},
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
		// Short values and ordinary environment values stay; a given value of 4 bytes goes.
		{"abc PATH /usr/bin:/bin /root 12345", "abc PATH /usr/bin:/bin /root 12345"},
		{"wxyz", "[redacted]"},
		// Secrets under names that do not say "secret" or "token".
		{"patvalue-0001 AKIDVALUE0002 awssecret0003 deploykey0004", "[redacted] [redacted] [redacted] [redacted]"},
		// Tokens of known shapes, whatever variable they came from, and URL passwords.
		{"ghp_0123456789abcdefghijABCD AKIAABCDEFGHIJKLMNOP AIzaSyA1234567890abcdefghijklmnopqrstu xoxb-1234567890-abc",
			"[redacted] [redacted] [redacted] [redacted]"},
		{`{"url":"https://user:pa55word@example.com/x"}`, `{"url":"https://user:[redacted]@example.com/x"}`},
		{"https://example.com/a:b@c", "https://example.com/a:b@c"},
		// Escaped secrets are found decoded, and re-encoded redacted; the rest keeps its bytes.
		{`{"a":"\u0067iven-secret-value","b":"keep\u0020me"}`, `{"a":"[redacted]","b":"keep\u0020me"}`},
		{`{"t":"Bearer\u0020abcdefghijkl"}`, `{"t":"Bearer [redacted]"}`},
		{`{"k":"sk\u002dlive-ABCDEFGHIJKLMNOP1234"}`, `{"k":"[redacted]"}`},
		// A credential key spelled with escapes still has its value redacted.
		{`{"acc\u0065ssToken":"tok-123456"}`, `{"accessToken":"[redacted]"}`},
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
	// A file that exists with a wider mode is narrowed: a record is its owner's only.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	red := NewRedactor([]string{"hunter2-secret"}, nil, nil)
	rec, err := Record(path, Header{Tool: "probe", Command: "agent --key hunter2-secret", Argv: []string{"agent", "--key", "hunter2-secret"}}, red)
	if err != nil {
		t.Fatal(err)
	}
	rec.Log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(`{"jsonrpc":"2.0","method":"m","params":{"k":"hunter2-secret"}}`)})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode %v (%v), want 0600", st.Mode().Perm(), err)
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

// A secret split across two stderr writes is recorded whole, so it is redacted whole: neither
// half reaches the log, and the stderr tail cannot join them back.
func TestRedactorSplitStderr(t *testing.T) {
	r := NewRedactor([]string{"planted-split-secret-42"}, nil, nil)
	log := jsonrpc.NewLog()
	log.SetFilter(r.Frame)
	log.AppendStderr([]byte("leak: planted-spl"))
	log.AppendStderr([]byte("it-secret-42 and sk-abcdef"))
	log.AppendStderr([]byte("ghijklmnopqrstu\n"))
	log.FlushStderr()
	var all strings.Builder
	for _, f := range log.Frames() {
		all.Write(f.Raw)
	}
	if got := all.String(); got != "leak: [redacted] and [redacted]\n" {
		t.Errorf("stderr recorded as %q", got)
	}
}
