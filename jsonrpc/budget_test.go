package jsonrpc

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// Past its budget a log folds what Keep does not ask for into counted runs, keeps what Keep
// asks for up to twice the budget, and observers still see every frame whole.
func TestLogBudgetFolds(t *testing.T) {
	log := NewLog()
	var observed int
	log.Observe(func(Frame) { observed++ })
	log.SetBudget(Budget{Bytes: 8 << 10, Keep: func(f Frame) bool { return f.Dir == DirEvent }})
	note := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}`)
	for i := 0; i < 1000; i++ {
		log.Append(Frame{Dir: DirAgent, Raw: note})
	}
	log.Event("marker", nil)
	for i := 0; i < 10; i++ {
		log.Append(Frame{Dir: DirAgent, Raw: []byte(`{"jsonrpc":"2.0","method":"other","params":{}}`)})
	}
	frames := log.Frames()
	if observed != 1011 {
		t.Fatalf("observers saw %d frames, want 1011", observed)
	}
	var kept, foldedFrames int64
	var runs []*Folded
	var marker int64
	for _, f := range frames {
		switch f.Dir {
		case DirFolded:
			runs = append(runs, f.Folded)
			foldedFrames += f.Folded.Frames
			if f.Folded.LastSeq < f.Seq {
				t.Errorf("run %d..%d", f.Seq, f.Folded.LastSeq)
			}
		case DirEvent:
			marker = f.Seq
		default:
			kept++
		}
	}
	if kept+foldedFrames != 1010 || len(runs) != 2 {
		t.Fatalf("kept %d + folded %d in %d runs, want 1010 in 2 runs (split by the kept event)", kept, foldedFrames, len(runs))
	}
	if kept > 8<<10/int64(frameOverhead) {
		t.Errorf("kept %d frames whole, over the budget", kept)
	}
	if marker != 1001 {
		t.Errorf("the event has seq %d, want 1001: folding must not renumber", marker)
	}
	if runs[0].Counts["agent session/update"] != runs[0].Frames || runs[1].Counts["agent other"] != 10 {
		t.Errorf("counts %v / %v", runs[0].Counts, runs[1].Counts)
	}
	if runs[0].Bytes != runs[0].Frames*int64(len(note)) {
		t.Errorf("folded bytes %d for %d frames", runs[0].Bytes, runs[0].Frames)
	}
}

// The labels of one run are bounded; the rest count as FoldedOther.
func TestLogBudgetBoundsLabels(t *testing.T) {
	log := NewLog()
	log.SetBudget(Budget{Bytes: 1})
	for i := 0; i < 500; i++ {
		log.Append(Frame{Dir: DirAgent, Raw: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"m%d"}`, i))})
	}
	f := log.Frames()
	if len(f) != 1 || f[0].Dir != DirFolded {
		t.Fatalf("%d frames, want one folded run", len(f))
	}
	if n := len(f[0].Folded.Counts); n != maxFoldedLabels+1 || f[0].Folded.Counts[FoldedOther] != 500-maxFoldedLabels {
		t.Errorf("%d labels, other %d", n, f[0].Folded.Counts[FoldedOther])
	}
}

// A flood costs counters, not memory: 200k notifications through a 1 MiB budget leave the
// heap about where 2k leave it.
func TestLogBudgetBoundsMemory(t *testing.T) {
	grow := func(n int) uint64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		log := NewLog()
		log.SetBudget(Budget{Bytes: 1 << 20})
		line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 200) + `"}}}}`)
		for i := 0; i < n; i++ {
			log.Append(Frame{Dir: DirAgent, Raw: line})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(log)
		return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
	}
	small, big := grow(20_000), grow(200_000)
	if big > small+4<<20 {
		t.Errorf("the heap grew %d bytes for 200k frames against %d for 20k: the budget does not bound it", big, small)
	}
}

// Stderr is one stream: a line (and a secret in it) split across writes is recorded whole.
func TestAppendStderrKeepsLinesWhole(t *testing.T) {
	log := NewLog()
	log.AppendStderr([]byte("token=sk-abc"))
	log.AppendStderr([]byte("def123\nnext "))
	log.AppendStderr([]byte("line"))
	log.FlushStderr()
	var chunks []string
	for _, f := range log.Frames() {
		chunks = append(chunks, string(f.Raw))
	}
	if strings.Join(chunks, "|") != "token=sk-abcdef123\n|next line" {
		t.Errorf("chunks %q", chunks)
	}
	// A line that never ends is cut after a space past 4 KiB, and hard at 64 KiB.
	log = NewLog()
	log.AppendStderr(bytes.Repeat([]byte("ab "), 2000))
	log.AppendStderr(bytes.Repeat([]byte("z"), 70<<10))
	frames := log.Frames()
	if len(frames) != 2 || !bytes.HasSuffix(frames[0].Raw, []byte(" ")) || len(frames[1].Raw) != 70<<10 {
		t.Errorf("%d frames", len(frames))
	}
}

// KeepNone: the log keeps no frame, Keep notwithstanding; everything is one counted run, and
// observers see every frame whole.
func TestLogKeepNone(t *testing.T) {
	log := NewLog()
	var observed int
	log.Observe(func(f Frame) {
		if len(f.Raw) > 0 || f.Dir == DirEvent {
			observed++
		}
	})
	log.SetBudget(Budget{Bytes: KeepNone, Keep: func(Frame) bool { return true }})
	for range 1000 {
		log.Append(Frame{Dir: DirAgent, Raw: []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}`)})
		log.Event("marker", nil)
	}
	frames := log.Frames()
	if observed != 2000 {
		t.Errorf("observers saw %d frames, want 2000", observed)
	}
	if len(frames) != 1 || frames[0].Folded == nil || frames[0].Folded.Frames != 2000 {
		t.Fatalf("kept %d frames (%+v), want one run of 2000", len(frames), frames[0].Folded)
	}
}

// What a log keeps costs what its budget counts: a kept line read by a LineReader holds its
// length once, its decoded message aliasing it, with no slack from growing it. 48 answers of
// 1 MiB and a byte (the size that leaves most slack when a line grows by appending) through a
// budget of 4 MiB, kept up to 8 MiB: the heap holds at most 9 MiB of them (before: each value
// copied for its message and each line's buffer grown past its length, 13 MiB).
func TestLogKeptCostsItsBudget(t *testing.T) {
	const budget = 4 << 20
	answer := `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"pad":"` + strings.Repeat("x", 1<<20+1-len(`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"pad":""}}}`)) + `"}}}` + "\n"
	var in []io.Reader
	for range 48 {
		in = append(in, strings.NewReader(answer))
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	log := NewLog()
	log.SetBudget(Budget{Bytes: budget, Keep: func(Frame) bool { return true }})
	lr := NewLineReader(io.MultiReader(in...), 0)
	for {
		line, err := lr.Next()
		if err != nil {
			break
		}
		log.Append(Frame{Dir: DirAgent, Raw: line.Raw, Size: line.Size})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	frames := log.Frames()
	kept := 0
	for _, f := range frames {
		if f.Dir == DirAgent {
			kept++
			if f.Msg == nil || len(f.Msg.Result) == 0 {
				t.Fatalf("kept frame %d has no result", f.Seq)
			}
		}
	}
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d answers kept, %d folded: the heap grew %d KiB", kept, 48-kept, grew>>10)
	if kept < 7 || kept > 8 {
		t.Errorf("%d answers of 1 MiB kept, want 7 or 8 (twice the budget)", kept)
	}
	if grew > 9<<20 {
		t.Errorf("the log holds %d MiB for %d answers of 1 MiB kept: want what the budget counts, at most 9 MiB", grew>>20, kept)
	}
	runtime.KeepAlive(frames)
}
