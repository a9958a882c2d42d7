package transport

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

// fakeStopper records the ladder's actions; the agent "ends" at the action named in endOn
// (or has already ended, unrecorded, when endedEarly).
type fakeStopper struct {
	l          *lifecycle
	endOn      record.ExitCause
	endedEarly bool
	did        []record.ExitCause
}

func (f *fakeStopper) act(step record.ExitCause) {
	f.did = append(f.did, step)
	if step == f.endOn {
		code := 0
		go f.l.finish(&code, "")
	}
}

func (f *fakeStopper) closeStdin()          { f.act(record.ExitStdin) }
func (f *fakeStopper) terminate()           { f.act(record.ExitSigterm) }
func (f *fakeStopper) kill(_ time.Duration) { f.act(record.ExitSigkill) }
func (f *fakeStopper) endedNow() bool {
	if f.endedEarly {
		code := 0
		go f.l.finish(&code, "")
	}
	return f.endedEarly
}

func TestLadderSteps(t *testing.T) {
	cases := []struct {
		name       string
		ladder     Ladder
		endOn      record.ExitCause
		endedEarly bool
		did        []record.ExitCause
		by         record.ExitCause
	}{
		{"leaves on stdin", Patient(time.Second), record.ExitStdin, false, []record.ExitCause{record.ExitStdin}, record.ExitStdin},
		{"signalled at once", Ladder{StdinWait: 0, Grace: time.Second}, record.ExitSigterm, false, []record.ExitCause{record.ExitStdin, record.ExitSigterm}, record.ExitSigterm},
		{"needs SIGKILL", Ladder{StdinWait: 0, Grace: time.Millisecond}, record.ExitSigkill, false, []record.ExitCause{record.ExitStdin, record.ExitSigterm, record.ExitSigkill}, record.ExitSigkill},
		// Exited by itself after stdin closed but not reaped yet: no signal is sent, and the
		// exit is not blamed on one.
		{"ended before the signal", Ladder{StdinWait: 0, Grace: time.Second}, "", true, []record.ExitCause{record.ExitStdin}, record.ExitStdin},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLifecycle()
			f := &fakeStopper{l: &l, endOn: tc.endOn, endedEarly: tc.endedEarly}
			ld := tc.ladder.withDefaults()
			var after []bool
			ld.AfterStdin = func(left bool) {
				f.did = append(f.did, "after-stdin")
				after = append(after, left)
			}
			l.ladder(context.Background(), ld, f)
			x := l.Exit()
			// The hook runs once, right after the stdin step, before any signal; it says
			// whether the agent left on its stdin EOF.
			want := slices.Insert(slices.Clone(tc.did), 1, "after-stdin")
			if !slices.Equal(f.did, want) || x.By != tc.by {
				t.Errorf("did %v, exit by %q; want %v, %q", f.did, x.By, want, tc.by)
			}
			if len(after) != 1 || after[0] != (tc.by == record.ExitStdin) {
				t.Errorf("AfterStdin got %v, want one call saying left=%v", after, tc.by == record.ExitStdin)
			}
			if (x.By == record.ExitStdin) != (x.AfterStdinCloseMs != nil) {
				t.Errorf("afterStdinCloseMs = %v with by %q", x.AfterStdinCloseMs, x.By)
			}
		})
	}
}

func TestLadderDefaults(t *testing.T) {
	if l := (Ladder{StdinWait: -1}).withDefaults(); l.StdinWait != 0 || l.Grace != DefaultGrace {
		t.Errorf("defaults = %+v", l)
	}
}

func TestMarkerEntry(t *testing.T) {
	m := Marker("aaaa.bbbb")
	if got := markerEntry([]string{"A=1"}, m); got != MarkerVar+"=aaaa.bbbb" {
		t.Errorf("fresh entry = %q", got)
	}
	// A host inside another host's agent keeps the inherited markers.
	if got := markerEntry([]string{MarkerVar + "=x.1,y.2"}, m); got != MarkerVar+"=x.1,y.2,aaaa.bbbb" {
		t.Errorf("nested entry = %q", got)
	}
	var long []string
	for range 20 {
		long = append(long, "r.l")
	}
	got := markerEntry([]string{MarkerVar + "=" + strings.Join(long, ",")}, m)
	if items := strings.Split(strings.TrimPrefix(got, MarkerVar+"="), ","); len(items) != maxMarkers || items[maxMarkers-1] != string(m) {
		t.Errorf("the list is not bounded, or lost the new marker: %q", got)
	}
}

// The settle window counts from the group's SIGTERM when the ladder sent one, from the agent's
// end otherwise, and leaves at least a third of it after that end.
func TestSettleDeadline(t *testing.T) {
	const settle = 150 * time.Millisecond
	for _, tc := range []struct {
		name       string
		terminated time.Duration // before now; 0: no SIGTERM
		signalled  bool
		lo, hi     time.Duration // of the deadline, from now
	}{
		{"no SIGTERM: from the agent's end", 0, false, settle, settle + 50*time.Millisecond},
		{"SIGTERM 100 ms ago: what is left of the window", 100 * time.Millisecond, true, 0, settle - 100*time.Millisecond + 20*time.Millisecond},
		{"SIGTERM 2 s ago: a third of it", 2 * time.Second, true, settle / 3, settle/3 + 20*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLifecycle()
			if tc.terminated > 0 {
				l.terminated = time.Now().Add(-tc.terminated)
			}
			before := time.Now()
			deadline, signalled := l.settleDeadline(settle)
			if signalled != tc.signalled {
				t.Errorf("signalled = %v, want %v", signalled, tc.signalled)
			}
			if d := deadline.Sub(before); d < tc.lo || d > tc.hi {
				t.Errorf("deadline %v from now, want within [%v, %v]", d, tc.lo, tc.hi)
			}
		})
	}
}
