package transcript

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// FuzzRead: any file either reads or fails with an error; frames that read back write and
// read again to the same frames.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{Tool: "probe", Start: "2026-01-01T00:00:00Z"})
	for _, fr := range sample() {
		w.Frame(fr)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"acpprobeTranscript":1}` + "\n" + `{"seq":1,"t":-1,"dir":"agent","rawBase64":"!!"}`))
	f.Add([]byte(`{"acpprobeTranscript":1}` + "\n" + `{"seq":1,"t":1e308,"dir":"event","kind":"x","data":[1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, frames, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		w, err := NewWriter(&out, h)
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range frames {
			w.Frame(fr)
		}
		_, again, err := Read(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("rewritten transcript does not read: %v", err)
		}
		if len(again) != len(frames) {
			t.Fatalf("%d frames, then %d", len(frames), len(again))
		}
		for i := range frames {
			if !bytes.Equal(frames[i].Raw, again[i].Raw) || frames[i].Dir != again[i].Dir || frames[i].Kind != again[i].Kind {
				t.Fatalf("frame %d changed: %+v vs %+v", i, frames[i], again[i])
			}
		}
	})
}

// FuzzReplayer: a replayer built from any frames answers any input without panicking.
func FuzzReplayer(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`+"\n"), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	f.Fuzz(func(t *testing.T, input, agent []byte) {
		log := jsonrpc.NewLog()
		for _, line := range bytes.Split(input, []byte("\n")) {
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirClient, Raw: line})
		}
		for _, line := range bytes.Split(agent, []byte("\n")) {
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: line})
		}
		var out bytes.Buffer
		_ = NewReplayer(log.Frames()).Serve(t.Context(), bytes.NewReader(input), &out, &out, false)
	})
}

// FuzzRedactPrefilters: the literal checks that let text and credentialValues skip their
// patterns never skip a match: the redaction equals the patterns applied to everything.
func FuzzRedactPrefilters(f *testing.F) {
	r := NewRedactor([]string{"given-secret"}, nil, []string{"vendorKey"})
	for _, s := range []string{
		`{"headers":{"Authorization":"BeArEr abcdefgh1234"}}`, "bearer\tabcdefghij", "BEARER 12345678",
		"key sk-0123456789abcdef0123 and ghp_01234567890123456789ab", "AKIA0123456789ABCDEF", "AIza" + strings.Repeat("x", 30),
		"xoxb-0123456789", "github_pat_01234567890123456789", "https://user:pass@host/x", "ftp://u:p@h", "mail a@b://",
		`{"apiKey":"v","ns/vendorKey":{"a":1},"token" : 3}`, `"\u0061piKey":"x"`, "plain text, nothing to hide", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := b
		for _, s := range r.secrets {
			want = bytes.ReplaceAll(want, s, []byte(Redacted))
		}
		want = bearer().ReplaceAll(want, []byte("${1}"+Redacted))
		want = tokens().ReplaceAll(want, []byte(Redacted))
		want = urlPassword().ReplaceAll(want, []byte("${1}"+Redacted+"@"))
		if got := r.text(b); !bytes.Equal(got, want) {
			t.Fatalf("text(%q) = %q, the patterns give %q", b, got, want)
		}
		if r.keys.Match(b) && !slices.ContainsFunc(r.keyWords, func(k []byte) bool { return bytes.Contains(b, k) }) {
			t.Fatalf("%q matches the credential keys but holds none of their names", b)
		}
	})
}
