package transport

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
)

// MarkerVar is the environment variable that tags every process of a launched agent.
const MarkerVar = "ACPPROBE_RUN"

// Marker tags the processes of one launch: "<run>.<launch>", two random hex tokens. run is
// the same for every launch of this host process (the watchdog kills by it); launch is new
// for each launch (Sweep and Kill select by the whole marker).
//
// MarkerVar holds a comma-separated list of markers: a host that is itself a descendant of
// another host's agent (acpprobe probing acpprobe) adds its marker to the one it inherited,
// so each host's sweep still finds every process of its own agent.
type Marker string

// maxMarkers bounds the list an environment carries (the most recent are kept).
const maxMarkers = 8

// markerEntry returns the MarkerVar entry for an agent of a host whose environment is env:
// m added to the list env carries already.
func markerEntry(env []string, m Marker) string {
	items := []string{string(m)}
	for _, kv := range env {
		if list, ok := strings.CutPrefix(kv, MarkerVar+"="); ok {
			items = append(strings.Split(list, ","), string(m))
		}
	}
	if len(items) > maxMarkers {
		items = items[len(items)-maxMarkers:]
	}
	return MarkerVar + "=" + strings.Join(items, ",")
}

var runToken = sync.OnceValue(func() string { return randomHex() })

// newMarker returns a fresh marker of this host process's run.
func newMarker() Marker { return Marker(runToken() + "." + randomHex()) }

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// Scope names the processes that belong to one launched agent, other than the agent itself
// (its Leader). The zero Scope names none.
type Scope struct {
	// Marker selects the processes whose environment carries Marker.Env().
	Marker Marker
	// Leader is the agent's pid, never selected. When not 0 it also selects the processes
	// whose process group or session is Leader (the agent runs in a session of its own).
	Leader int
	// since is a floor on the processes' start time (clock ticks after boot): none of the
	// agent's processes can have started before the agent. It saves reading the environment
	// of older processes.
	since uint64
	// forks is the kernel's fork count just before the agent started (0: unknown); with
	// Leader it bounds which pids a sweep needs to look at.
	forks uint64
	// cgroup is the directory of the launch's cgroup (Linux, cgroup v2; "" without): every
	// process in it is selected.
	cgroup string
}
