package transcript

import (
	"bytes"
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
