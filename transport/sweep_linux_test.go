package transport

import "testing"

func TestPidWindow(t *testing.T) {
	cases := []struct {
		name                 string
		leader, last, pidMax int
		then, now            uint64
		in, out              []int // pids inside and outside the window; nil window when both nil
	}{
		{"no wrap", 1000, 1200, 32768, 50, 250, []int{1001, 1200}, []int{999, 1000, 1201, 300}},
		{"wrapped once", 32000, 500, 32768, 50, 1300, []int{32001, 32767, 300, 500}, []int{501, 31999, 32000}},
		{"may have wrapped past the leader", 1000, 1200, 32768, 50, 50 + 32768 - 300, nil, nil},
		{"fork count unknown", 1000, 1200, 32768, 0, 250, nil, nil},
		{"fork count went back", 1000, 1200, 32768, 250, 50, nil, nil},
	}
	for _, tc := range cases {
		w := pidWindow(tc.leader, tc.last, tc.pidMax, tc.then, tc.now)
		if (w == nil) != (tc.in == nil && tc.out == nil) {
			t.Errorf("%s: window %v", tc.name, w != nil)
			continue
		}
		for _, pid := range tc.in {
			if !w(pid) {
				t.Errorf("%s: %d is outside", tc.name, pid)
			}
		}
		for _, pid := range tc.out {
			if w(pid) {
				t.Errorf("%s: %d is inside", tc.name, pid)
			}
		}
	}
}

func TestMatcherCarries(t *testing.T) {
	scope := Scope{Marker: "aaaa.1111"}.matcher()
	run := runMatcher("bbbb", 0)
	for _, tc := range []struct {
		entry      string
		scope, run bool
	}{
		{MarkerVar + "=aaaa.1111", true, false},
		{MarkerVar + "=bbbb.2222,aaaa.1111", true, true},
		{MarkerVar + "=aaaa.11112", false, false},
		{MarkerVar + "=xaaaa.1111", false, false},
		{MarkerVar + "=bbbbb.1", false, false},
		{"X" + MarkerVar + "=aaaa.1111", false, false},
		{MarkerVar + "=", false, false},
	} {
		if got := scope.carries([]byte(tc.entry)); got != tc.scope {
			t.Errorf("scope carries %q = %v", tc.entry, got)
		}
		if got := run.carries([]byte(tc.entry)); got != tc.run {
			t.Errorf("run carries %q = %v", tc.entry, got)
		}
	}
}
