//go:build unix && !linux

package sandbox

import (
	"context"
	"errors"
	"net"
	"os/exec"

	"github.com/acpprobe/acpprobe/record"
)

// Init returns at once: the namespace helper exists on Linux only.
func Init() {}

// Capabilities says which isolation levels this machine allows.
type Capabilities struct {
	Levels []record.Level `json:"levels"`
	// Net is whether record.LevelNet works here; NetUnavailable says why not.
	Net            bool   `json:"-"`
	NetUnavailable string `json:"netUnavailable,omitempty"`
}

// Available says which levels work here: record.LevelEnvHome only, network namespaces being Linux's.
func Available() Capabilities {
	return Capabilities{Levels: []record.Level{record.LevelEnvHome}, NetUnavailable: "network namespaces need Linux"}
}

// netHandoff is never made outside Linux (New refuses record.LevelNet).
type netHandoff struct{ ports []int }

func newNetHandoff(ports []int, _ bool) *netHandoff { return &netHandoff{ports: ports} }

func (h *netHandoff) prepare(*exec.Cmd) error { return errors.New("sandbox: no net level here") }
func (h *netHandoff) close()                  {}

// Listeners needs the net level, which needs Linux.
func (s *Sandbox) Listeners(context.Context) ([]net.Listener, error) {
	return nil, errors.New("sandbox: no ports to hand over (they need the net level, which needs Linux)")
}

// ServeNetwork needs the net level, which needs Linux: it returns at once.
func (s *Sandbox) ServeNetwork(context.Context) error { return nil }

// record.Network says nothing of the agent's network use was observed: it had the network.
func (s *Sandbox) Network() record.Network {
	return record.Network{Lookups: []string{}, Connects: []record.Connect{}, Note: "not observed: the agent had the network (only the net level cuts it)"}
}
