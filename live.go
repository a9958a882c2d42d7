package acpprobe

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Live judges a session while it is being recorded, as `acpprobe tap --check` does. Frames come
// in through Add (a jsonrpc.Log observer); each call of Judge judges the frames that came since
// the previous one through Analyze, each frame once, with the context judging them needs
// carried over from the frames before: the first event of each kind, the first exchange of
// each method the client called, the requests still waiting for an answer, the most recent
// answered ones, and how much stderr there was. So judging a session costs time in proportion
// to its length, whatever its duration, and what Live holds does not grow with it: the context
// is bounded (liveOpen, liveAnswered, liveMethods, liveWholeBytes), and Add makes the
// recording wait while livePendingBytes are waiting to be judged.
//
// The bounds have a price only in sessions beyond them: an answer to a request that left the
// context (more than liveOpen requests waiting at once) is judged as an answer to an unknown
// id, and a second answer to one answered more than liveAnswered exchanges earlier likewise.
//
// Each finding is returned once: not again when a later window finds it at the same place
// (check, line, pointer), nor when it says the same thing somewhere else (check, pointer,
// message, evidence), which Omitted counts instead; and at most MaxLivePerCheck per check.
type Live struct {
	opts AnalyzeOptions

	mu      sync.Mutex
	drained *sync.Cond // signalled when Judge takes the pending frames, or on Close
	pending []jsonrpc.Frame
	bytes   int64 // what pending holds, as liveCost counts it
	closed  bool
	ready   chan struct{}

	judging sync.Mutex // one Judge at a time; it guards the fields below
	judged  int64      // the seq of the last frame judged
	context []jsonrpc.Frame
	stderr  int64 // stderr bytes of the frames that left the context
	shown   map[string]bool
	count   map[string]int // findings returned, per check
	omitted map[string]int
}

// MaxLivePerCheck is how many findings of one check Live returns over a session.
const MaxLivePerCheck = 10

// The bounds of what Live holds.
const (
	// livePendingBytes bounds the frames waiting to be judged: Add waits beyond it.
	livePendingBytes = 4 << 20
	// liveWindowBytes and liveWindowFrames are where Ready asks for a Judge before its time;
	// liveWindowBytes also bounds the frames one analysis judges.
	liveWindowBytes  = 1 << 20
	liveWindowFrames = 4096
	// liveOpen bounds the unanswered requests the context keeps (the oldest leave first);
	// liveAnswered the answered exchanges (the most recent stay); liveMethods the methods
	// whose first exchange it keeps.
	liveOpen     = 1024
	liveAnswered = 256
	liveMethods  = 64
	// liveWholeBytes bounds the context's frames kept whole; beyond it a kept request or
	// answer keeps only its envelope (id, method, kind).
	liveWholeBytes = 16 << 20
)

// NewLive starts a live judgement of a session recorded from now on, judged with o (its
// Verdict is not used: a live session has no verdict).
func NewLive(o AnalyzeOptions) *Live {
	o.Verdict = nil
	l := &Live{opts: o, ready: make(chan struct{}, 1), shown: map[string]bool{}, count: map[string]int{}, omitted: map[string]int{}}
	l.drained = sync.NewCond(&l.mu)
	return l
}

// Add queues a frame of the session, in the order of the record (register it with
// jsonrpc.Log.Observe). While livePendingBytes wait to be judged it blocks until Judge takes
// them: the recording then goes at the pace of the judging. After Close it drops the frame.
func (l *Live) Add(f jsonrpc.Frame) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.bytes >= livePendingBytes && !l.closed {
		l.drained.Wait()
	}
	if l.closed {
		return
	}
	l.pending = append(l.pending, f)
	l.bytes += liveCost(f)
	if l.bytes >= liveWindowBytes || len(l.pending) >= liveWindowFrames {
		select {
		case l.ready <- struct{}{}:
		default:
		}
	}
}

// liveCost is what a frame waiting to be judged costs: its bytes, and about as much again for
// its decoded message.
func liveCost(f jsonrpc.Frame) int64 { return 2*int64(len(f.Raw)) + 256 }

// Ready receives a value when enough frames wait that a Judge should not wait for its time.
func (l *Live) Ready() <-chan struct{} { return l.ready }

// Close ends the session's recording: Add no longer waits, nor keeps anything.
func (l *Live) Close() {
	l.mu.Lock()
	l.closed = true
	l.pending, l.bytes = nil, 0
	l.mu.Unlock()
	l.drained.Broadcast()
}

// Judge judges the frames added since the last call, in windows of at most liveWindowBytes,
// and returns the findings not returned before, in the order of the report within each
// window. ctx bounds the judging, as for Analyze: what it cuts short is not judged again.
func (l *Live) Judge(ctx context.Context) ([]report.Finding, error) {
	l.judging.Lock()
	defer l.judging.Unlock()
	l.mu.Lock()
	news := l.pending
	l.pending, l.bytes = nil, 0
	l.mu.Unlock()
	l.drained.Broadcast()
	var out []report.Finding
	for len(news) > 0 {
		// Windows of at most liveWindowBytes: what analysing one costs stays bounded.
		n, cost := 0, int64(0)
		for n < len(news) && (n == 0 || cost+liveCost(news[n]) <= liveWindowBytes) {
			cost += liveCost(news[n])
			n++
		}
		window := slices.Concat(l.carried(), l.context, news[:n])
		r, err := analyze(ctx, window, l.opts, l.judged)
		if err != nil {
			return out, err
		}
		l.judged = news[n-1].Seq
		l.keep(window)
		out = append(out, l.fresh(r.Findings)...)
		news = news[n:]
	}
	return out, nil
}

// Omitted counts, per check, the findings Judge did not return: beyond MaxLivePerCheck, or
// saying again what one returned said.
func (l *Live) Omitted() map[string]int {
	l.judging.Lock()
	defer l.judging.Unlock()
	out := map[string]int{}
	for id, n := range l.omitted {
		if n > 0 {
			out[id] = n
		}
	}
	return out
}

// carried is the folded frame that stands for the frames no longer in the context (seq 0,
// before them all): what the derived facts total over the whole session (stderr).
func (l *Live) carried() []jsonrpc.Frame {
	if l.stderr == 0 {
		return nil
	}
	return []jsonrpc.Frame{{Dir: jsonrpc.DirFolded, Folded: &jsonrpc.Folded{LastSeq: l.judged, StderrBytes: l.stderr}}}
}

// keep makes the context of the next window from this one (see Live).
func (l *Live) keep(window []jsonrpc.Frame) {
	x := record.New(window)
	kept := map[int64]bool{}
	var whole []int64 // kept whole, in priority order
	var slim []int64  // kept as envelopes
	events := map[string]bool{}
	for _, f := range window {
		if f.Dir == jsonrpc.DirEvent && !events[f.Kind] {
			events[f.Kind] = true
			kept[f.Seq] = true
			whole = append(whole, f.Seq)
		}
	}
	exchange := func(ex *record.Exchange, asWhole bool) {
		seqs := []int64{ex.Request.Seq}
		if ex.Answer != nil {
			seqs = append(seqs, ex.Answer.Seq)
		}
		for _, s := range seqs {
			if kept[s] {
				continue
			}
			kept[s] = true
			if asWhole {
				whole = append(whole, s)
			} else {
				slim = append(slim, s)
			}
		}
	}
	// The first exchange of each method the client called: the handshake's facts.
	firsts := map[string]bool{}
	for _, ex := range x.Calls(jsonrpc.DirClient) {
		if m := ex.Method(); !firsts[m] && len(firsts) < liveMethods {
			firsts[m] = true
			exchange(ex, true)
		}
	}
	// The requests still waiting, the most recent first; then the most recent answered.
	var open, answered []*record.Exchange
	for _, dir := range []jsonrpc.Dir{jsonrpc.DirClient, jsonrpc.DirAgent} {
		for _, ex := range x.Calls(dir) {
			if ex.Answer == nil {
				open = append(open, ex)
			} else {
				answered = append(answered, ex)
			}
		}
	}
	byRecent := func(a, b *record.Exchange) int { return int(b.Request.Seq - a.Request.Seq) }
	slices.SortFunc(open, byRecent)
	slices.SortFunc(answered, byRecent)
	for _, ex := range open[:min(len(open), liveOpen)] {
		exchange(ex, true)
	}
	for _, ex := range answered[:min(len(answered), liveAnswered)] {
		exchange(ex, false)
	}

	budget := int64(liveWholeBytes)
	asWhole := map[int64]bool{}
	for _, s := range whole {
		if n := int64(len(frameAt(window, s).Raw)); n <= budget {
			budget -= n
			asWhole[s] = true
		}
	}
	next := make([]jsonrpc.Frame, 0, len(kept))
	for _, f := range window {
		switch {
		case f.Dir == jsonrpc.DirFolded:
		case !kept[f.Seq]:
			if f.Dir == jsonrpc.DirStderr {
				l.stderr += f.Size
			}
		case asWhole[f.Seq] || f.Msg == nil:
			next = append(next, f)
		default:
			next = append(next, envelope(f))
		}
	}
	l.context = next
}

// frameAt is the frame of window with seq s (the window is in seq order).
func frameAt(window []jsonrpc.Frame, s int64) jsonrpc.Frame {
	i, _ := slices.BinarySearchFunc(window, s, func(f jsonrpc.Frame, s int64) int { return int(f.Seq - s) })
	return window[i]
}

// envelope is a request or answer reduced to what pairs it (id, method, kind): what a later
// answer to it, or a second answer, is judged against.
func envelope(f jsonrpc.Frame) jsonrpc.Frame {
	m := *f.Msg
	m.Params = nil
	if m.Result != nil || m.Error != nil {
		m.Result, m.Error = json.RawMessage("null"), nil
	}
	return jsonrpc.Frame{Seq: f.Seq, Dir: f.Dir, At: f.At, Size: f.Size, Msg: &m}
}

// fresh keeps the findings of a window that were not returned before (see Live).
func (l *Live) fresh(findings []report.Finding) []report.Finding {
	var out []report.Finding
	for _, f := range findings {
		l.omitted[f.ID] += f.More
		f.More = 0 // counted in Omitted
		at := f.ID + "\x00" + strconv.FormatInt(f.Seq, 10) + "\x00" + f.Pointer
		same := f.ID + "\x00" + f.Pointer + "\x00" + f.Message + "\x00" + string(f.Evidence)
		switch {
		case l.shown[at]:
			continue // the same finding, judged again from the context
		case l.shown[same]:
			l.omitted[f.ID]++
			continue
		case l.count[f.ID] >= MaxLivePerCheck:
			l.omitted[f.ID]++
			continue
		}
		l.shown[at], l.shown[same] = true, true
		l.count[f.ID]++
		out = append(out, f)
	}
	return out
}
