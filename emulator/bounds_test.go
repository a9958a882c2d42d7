package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

// TestLenientShapes attacks the read of a request of a shape the emulator has not seen: a
// member of another type than the one it reads (a string for a boolean, an object for a
// list, a whole body that is a list). Each is answered like any other request — never 400,
// which an agent reports as an API error or retries — and recorded, saying what was skipped.
func TestLenientShapes(t *testing.T) {
	for _, tc := range []struct {
		dialect    Dialect
		path, body string
		lastText   string
	}{
		{Anthropic, "/v1/messages", `{"model":"m","stream":"yes","max_tokens":"9","tools":{"name":"Write"},"thinking":"adaptive",
			"output_config":{"effort":{"level":"high"}},"messages":[{"role":"user","content":"say hi"}]}`, "say hi"},
		{Anthropic, "/v1/messages", `[{"role":"user","content":"say hi"}]`, ""},
		{OpenAIResponses, "/v1/responses", `{"model":"m","reasoning":"high","tools":[{"type":"function","name":5}],"input":"say hi"}`, "say hi"},
		{OpenAIChat, "/v1/chat/completions", `{"model":"m","stream_options":true,"tools":[{"type":"function","function":"write_file"}],
			"messages":[{"role":"user","content":"say hi"}]}`, "say hi"},
		{Gemini, "/v1beta/models/g:generateContent", `{"contents":[{"role":"user","parts":[{"text":"say hi"}]}],
			"generationConfig":{"thinkingConfig":{"thinkingBudget":"8192"}},"tools":[{"functionDeclarations":{}}]}`, "say hi"},
	} {
		rec := newRecorder()
		s := start(t, rec.options(Text("fine")))
		resp := post(t, s, tc.dialect, tc.path, tc.body)
		wc := wireCases[indexOf(tc.dialect)]
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %.40s: status %d, want 200", tc.dialect, tc.body, resp.StatusCode)
			<-rec.answered
			continue
		}
		if d := wc.decode(t, resp.Body, false); d.text != "fine" {
			t.Errorf("%s %.40s: answered %+v", tc.dialect, tc.body, d)
		}
		res := <-rec.answered
		req, _ := rec.last()
		if res.Answer != "text" || req.Endpoint != "generate" || req.Dialect != string(tc.dialect) || req.LastUserText != tc.lastText ||
			!strings.HasPrefix(req.Problem, "read leniently, skipping ") || len(req.Body) == 0 {
			t.Errorf("%s %.40s: recorded %q %q %q problem %q, answer %q", tc.dialect, tc.body, req.Endpoint, req.Dialect, req.LastUserText, req.Problem, res.Answer)
		}
	}
}

// indexOf is the index of d's case in wireCases.
func indexOf(d Dialect) int {
	for i, wc := range wireCases {
		if wc.dialect == d {
			return i
		}
	}
	panic("no wire case for " + string(d))
}

// TestToolCallAskedOnce attacks the tool round trip with an agent that sends the same
// conversation again after the tool call, without its result (claude-agent-acp 0.101.0 did,
// and was asked for the write 28 times in one turn): the script asks for its tool once per
// installation, and answers the rest with its text; installing it again asks again.
func TestToolCallAskedOnce(t *testing.T) {
	for _, wc := range wireCases {
		rec := newRecorder()
		script := WriteFile("/work/x.txt", "data\n", "done")
		s := start(t, rec.options(script))
		for i, want := range []string{"tool", "done", "done"} {
			d := wc.decode(t, post(t, s, wc.dialect, wc.path(false), wc.first(false)).Body, false)
			if got := map[bool]string{true: "tool", false: d.text}[d.tool != ""]; got != want {
				t.Errorf("%s: request %d answered %+v, want %s", wc.dialect, i+1, d, want)
			}
			<-rec.answered
		}
		s.SetScript(script)
		if d := wc.decode(t, post(t, s, wc.dialect, wc.path(false), wc.first(false)).Body, false); d.tool == "" {
			t.Errorf("%s: after SetScript the script did not ask for its tool: %+v", wc.dialect, d)
		}
		<-rec.answered
	}
}

// TestModelRequestsBounded attacks the bound on the model requests of one installed script
// with scripts that never stop asking for a tool, or never stop failing (an agent retries a
// 429 or a 5xx): the first 16 requests get what the script says, every later one text, and
// its recorded answer says it was bounded; SetScript starts the count again.
func TestModelRequestsBounded(t *testing.T) {
	always := func(c *Call) Reply {
		use, err := Use(c.Tools[len(c.Tools)-1], nil)
		if err != nil {
			panic(err)
		}
		return Reply{Tool: use}
	}
	for _, tc := range []struct {
		name   string
		script Script
		first  func(*http.Response, decoded) bool
	}{
		{"tool call", always, func(_ *http.Response, d decoded) bool { return d.tool != "" }},
		{"error", Fail(http.StatusServiceUnavailable, "overloaded"), func(r *http.Response, _ decoded) bool { return r.StatusCode == 503 }},
	} {
		for _, wc := range wireCases {
			rec := newRecorder()
			s := start(t, rec.options(tc.script))
			for i := 1; i <= 20; i++ {
				resp := post(t, s, wc.dialect, wc.path(true), wc.first(true))
				var d decoded
				if resp.StatusCode == http.StatusOK {
					d = wc.decode(t, resp.Body, true)
				}
				res := <-rec.answered
				b, _ := json.Marshal(res)
				var m map[string]any
				mustDecode(t, string(b), &m)
				bounded := m["bounded"] == true
				if i <= 16 && (!tc.first(resp, d) || bounded) || i > 16 && (resp.StatusCode != http.StatusOK || d.tool != "" || d.text == "" || !bounded) {
					t.Fatalf("%s %s: request %d: status %d, answered %+v, recorded %s", tc.name, wc.dialect, i, resp.StatusCode, d, b)
				}
			}
			s.SetScript(tc.script)
			resp := post(t, s, wc.dialect, wc.path(true), wc.first(true))
			var d decoded
			if resp.StatusCode == http.StatusOK {
				d = wc.decode(t, resp.Body, true)
			}
			if !tc.first(resp, d) {
				t.Errorf("%s %s: after SetScript: status %d, answered %+v", tc.name, wc.dialect, resp.StatusCode, d)
			}
			<-rec.answered
		}
	}
}

// bigBody streams a Messages request of size bytes whose user text is all x, without
// holding it: 40 of them would otherwise cost the test what it measures.
type bigBody struct {
	head, tail string
	size, off  int
}

func newBigBody(size int) *bigBody {
	return &bigBody{head: `{"model":"big","max_tokens":9,"messages":[{"role":"user","content":"`, tail: `"}]}`, size: size}
}

var xs = []byte(strings.Repeat("x", 32<<10))

func (b *bigBody) Read(p []byte) (int, error) {
	var n int
	switch end := b.size - len(b.tail); {
	case b.off >= b.size:
		return 0, io.EOF
	case b.off < len(b.head):
		n = copy(p, b.head[b.off:])
	case b.off < end:
		n = copy(p[:min(len(p), end-b.off)], xs)
	default:
		n = copy(p, b.tail[b.off-end:])
	}
	b.off += n
	return n, nil
}

// TestConcurrentBodiesBounded attacks the emulator's memory with 40 requests of nearly
// MaxBody each at once, half with a Content-Length and half chunked (issue 24: 40 of 15 MiB
// took 2.6–2.9 GB and a 600 MB transcript). The heap in use stays within 6 × MaxBody of
// where it started, every request is answered, and each recorded request stays within the
// record's cap (the body's start, flagged, with its whole size) and still says what the
// request was.
func TestConcurrentBodiesBounded(t *testing.T) {
	const (
		maxBody = 4 << 20
		size    = maxBody - 64<<10
		n       = 40
		bound   = 6 * maxBody
	)
	var mu sync.Mutex
	var problems []string
	largest := 0
	s := start(t, Options{MaxBody: maxBody, Script: Text("ok"), OnRequest: func(r record.ModelRequestInfo) {
		b, _ := json.Marshal(r)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		defer mu.Unlock()
		largest = max(largest, len(b))
		if r.BodySize != size || m["bodyTruncated"] != true || r.Model != "big" || !strings.HasPrefix(r.LastUserText, "xxxx") || len(r.LastUserText) != maxPartExcerpt {
			problems = append(problems, fmt.Sprintf("size %d truncated %v model %q last user text of %d bytes; problem %q", r.BodySize, m["bodyTruncated"], r.Model, len(r.LastUserText), r.Problem))
		}
	}})

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	peak := make(chan uint64)
	done := make(chan struct{})
	livePeak := make(chan uint64, 1)
	go func() {
		var top, live uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapInuse)
			metrics.Read(sample)
			live = max(live, sample[0].Value.Uint64())
			select {
			case <-done:
				peak <- top
				livePeak <- live
				return
			case <-tick.C:
			}
		}
	}()

	var wg sync.WaitGroup
	status := make(chan int, n)
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", newBigBody(size))
			if i%2 == 0 {
				req.ContentLength = size
			}
			req.Header.Set("x-api-key", DummyKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				status <- -1
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status <- resp.StatusCode
		})
	}
	wg.Wait()
	close(done)
	top := <-peak
	close(status)
	for st := range status {
		if st != http.StatusOK {
			t.Errorf("a request was answered %d", st)
		}
	}
	t.Logf("heap in use: %d MiB before, %d MiB at the peak, live %d MiB; largest recorded request %d KiB", base>>20, top>>20, (<-livePeak)>>20, largest>>10)
	if top > base+bound {
		t.Errorf("heap in use grew by %d MiB, over the bound of %d MiB (6 × MaxBody)", (top-base)>>20, bound>>20)
	}
	mu.Lock()
	defer mu.Unlock()
	if largest > maxRecordedBody+16<<10 {
		t.Errorf("a recorded request is %d KiB of JSON, over the record's cap of %d KiB", largest>>10, maxRecordedBody>>10)
	}
	if len(problems) > 0 {
		t.Errorf("%d of %d recorded requests are wrong, e.g. %s", len(problems), n, problems[0])
	}
}

// TestBodiesWaitTheirTurn attacks the in-flight budget with two requests that each take all
// of it and never finish their bodies, and a third behind them: the third waits (an agent
// waits on a slow answer; it would retry an error), in arrival order, longer than the read
// timeout of a request, and is still read whole and answered once the two have timed out.
func TestBodiesWaitTheirTurn(t *testing.T) {
	const maxBody = 1 << 20
	type event struct {
		n       int64
		granted bool
	}
	events := make(chan event, 16)
	rec := newRecorder()
	opts := rec.options(Text("your turn"))
	opts.MaxBody, opts.bodyTimeout = maxBody, 200*time.Millisecond
	opts.onShare = func(n int64, granted bool) { events <- event{n, granted} }
	s := start(t, opts)
	expect := func(want event) {
		t.Helper()
		select {
		case got := <-events:
			if got != want {
				t.Fatalf("budget event %+v, want %+v", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no budget event %+v", want)
		}
	}
	statuses := make(chan int, 3)
	send := func(body io.Reader, size int64) {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", body)
		req.ContentLength = size
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			statuses <- -1
			return
		}
		resp.Body.Close()
		statuses <- resp.StatusCode
	}
	for i := range 2 {
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.Close() })
		go func() { _, _ = pw.Write([]byte(`{"model":"m","messages":[`)) }() // and never the rest
		go send(pr, maxBody)
		expect(event{maxBody, i == 0})
	}
	small := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("y", 64<<10) + `"}]}`
	go send(strings.NewReader(small), int64(len(small)))
	expect(event{int64(len(small)), false})
	expect(event{maxBody, true}) // the second, once the first timed out
	expect(event{int64(len(small)), true})
	var got []int
	for range 3 {
		got = append(got, <-statuses)
	}
	if slices.Sort(got); !slices.Equal(got, []int{http.StatusOK, http.StatusBadRequest, http.StatusBadRequest}) {
		t.Errorf("statuses %v, want 400 and 400 for the bodies that never ended, 200 for the one that waited", got)
	}
	for range 3 {
		<-rec.answered
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, req := range rec.requests {
		if req.BodySize != len(small) {
			continue
		}
		for _, res := range rec.responses {
			if res.Seq == req.Seq && (req.Seq != 3 || res.Status != http.StatusOK || !strings.HasPrefix(req.LastUserText, "yyy")) {
				t.Errorf("the request that waited was recorded as seq %d, answered %+v", req.Seq, res)
			}
		}
	}
}

// TestRecordedRequestBounded attacks what the record keeps of what was parsed with a body
// whose every member is long: a model name of 256 KiB, 600 tools with names of 2 KiB, 300
// tool results with ids of 1 KiB, a last message of 3000 parts of long kinds. Each field is
// cut, and the whole recorded request stays within 1.5 MiB of JSON (the body's 256 KiB, the
// tools' 128 KiB, the results' 640 KiB at most).
func TestRecordedRequestBounded(t *testing.T) {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	var b strings.Builder
	fmt.Fprintf(&b, `{"model":%q,"tools":[`, long("m", 256<<10))
	for i := range 600 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"%04d%s","input_schema":{"type":"object"}}`, i, long("t", 2<<10))
	}
	b.WriteString(`],"messages":[{"role":"assistant","content":"x"},{"role":"user","content":[`)
	for i := range 300 {
		fmt.Fprintf(&b, `{"type":"tool_result","tool_use_id":"%04d%s","content":"done"},`, i, long("i", 1<<10))
	}
	for i := range 3000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"%04d%s"}`, i, long("k", 400))
	}
	b.WriteString(`]}]}`)
	rec := newRecorder()
	s := start(t, rec.options(nil))
	post(t, s, Anthropic, "/v1/messages", b.String())
	<-rec.answered
	req, _ := rec.last()
	out, _ := json.Marshal(req)
	if len(out) > 3<<19 {
		t.Errorf("the recorded request is %d KiB of JSON for a body of %d KiB, over 1.5 MiB", len(out)>>10, b.Len()>>10)
	}
	if len(req.Model) > 256 || len(req.Tools) != maxTools || len(req.Tools[0]) > 256 || len(req.ToolResults) != maxToolResults ||
		len(req.ToolResults[0].CallID) > 256 || len(req.LastUserKinds) != 64 || len(req.LastUserKinds[0]) > 256 ||
		!strings.HasPrefix(req.LastUserKinds[63], "2999k") {
		t.Errorf("recorded model of %d bytes, %d tools (the first %d bytes), %d results (the first id %d bytes), %d kinds (the first %d bytes)",
			len(req.Model), len(req.Tools), len(req.Tools[0]), len(req.ToolResults), len(req.ToolResults[0].CallID), len(req.LastUserKinds), len(req.LastUserKinds[0]))
	}
}
