package turn

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/clientprofile"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
)

// BackendGateway is the Backend that takes the agent's gateway login whatever profile
// matches (see Options.Backend).
const BackendGateway = "gateway"

// route is how a turn run points its agent at the emulator: what the record says of it, and
// what the run does (the setup of a profile or of auto, the authenticate call, the client's
// capabilities).
type route struct {
	info   record.RouteInfo
	setup  *emulator.Setup
	login  *probe.Authenticate
	client json.RawMessage // set on a gateway route: the run declares clientprofile.WithGateway of its profile
}

// ok reports whether there is a route.
func (r route) ok() bool { return r.info.Kind != record.RouteNone }

// chooseRoute finds the route to the emulator: the profile --backend names; else a profile
// that matches the agent's id, config name, package or program; else, from a first,
// initialize-only handshake as a client that accepts gateway logins, a profile that matches
// its agentInfo.name, then its gateway login when it offers one in a protocol the emulator
// speaks; else auto (every dialect on one port, every variable the profiles know). At the net
// level only the sandbox's first command reaches the emulator, so no first handshake runs: a
// profile by the agent's names, or auto.
func (o Options) chooseRoute(ctx context.Context, cmd transport.Command, box *sandbox.Sandbox, srv *emulator.Server) (route, error) {
	keys := keysOf(o.Keys, cmd.Argv)
	values := emulator.ValuesFor(srv, box.Home())
	switch o.Backend {
	case "":
	case BackendGateway:
		methods, _ := o.firstHandshake(ctx, cmd, box)
		if r, ok := gatewayRoute(methods, srv); ok {
			return r, nil
		}
		return route{info: record.RouteInfo{Kind: record.RouteNone, Reason: "--backend gateway: the agent offers no gateway login in a protocol the emulator speaks (anthropic, openai, google) to a client that accepts them"}}, nil
	default:
		p, ok := o.Profiles.Backend(emulator.Dialect(o.Backend))
		if !ok {
			return route{info: record.RouteInfo{Kind: record.RouteNone, Reason: ErrNoProfile.Error()}}, nil
		}
		return profileRoute(p, "--backend "+o.Backend, values)
	}
	if p, by, ok := o.Profiles.Match(keys); ok {
		return profileRoute(p, by, values)
	}
	if box.Level() != record.LevelNet {
		methods, name := o.firstHandshake(ctx, cmd, box)
		if name != "" {
			keys.AgentName = name
			if p, by, ok := o.Profiles.Match(keys); ok {
				return profileRoute(p, by, values)
			}
		}
		if r, ok := gatewayRoute(methods, srv); ok {
			return r, nil
		}
	}
	p, ok := o.Profiles.Backend(emulator.Auto)
	if !ok {
		return route{info: record.RouteInfo{Kind: record.RouteNone, Reason: ErrNoProfile.Error()}}, nil
	}
	r, err := profileRoute(p, "", values)
	r.info.Kind = record.RouteAuto
	return r, err
}

// profileRoute is the route of profile p, chosen by (how it matched).
func profileRoute(p emulator.Profile, by string, v emulator.Values) (route, error) {
	setup, err := p.Setup(v)
	if err != nil {
		return route{}, err
	}
	info := record.RouteInfo{Kind: record.RouteProfile, Profile: p.Name, MatchedBy: by, VerifiedOn: p.Verified,
		Dialect: string(p.Dialect), Emptied: setup.Empty, Conditions: p.Conditions}
	for _, kv := range setup.Env {
		name, value, _ := strings.Cut(kv, "=")
		if value == v.DummyKey || value == emulator.DummyKey {
			value = "(the emulator's dummy key)"
		}
		info.Env = append(info.Env, record.EnvSetting{Name: name, Value: value})
	}
	for _, f := range setup.Files {
		rel, _ := filepath.Rel(v.Home, f.Path)
		info.Files = append(info.Files, "~/"+filepath.ToSlash(rel))
	}
	r := route{info: info, setup: &setup, login: loginOf(setup)}
	if setup.Gateway != nil {
		r.info.Authenticate, r.info.Gateway = setup.Gateway.Method, setup.Gateway.BaseURL
		r.client = clientprofile.Gateway()
	} else if setup.Authenticate != "" {
		r.info.Authenticate = setup.Authenticate
	}
	return r, nil
}

// gatewayRoute is the route through the first gateway login among methods whose protocol the
// emulator speaks; false when there is none.
func gatewayRoute(methods []json.RawMessage, srv *emulator.Server) (route, bool) {
	for _, raw := range methods {
		m := acp.ParseObject(raw)
		protocol := m.Object("_meta").Object("gateway").String("protocol")
		dialect, ok := emulator.GatewayProtocols[protocol]
		if !ok || m.String("id") == "" {
			continue
		}
		login := emulator.GatewayLogin{Method: m.String("id"), BaseURL: srv.URL() + emulator.GatewayPath(protocol)}
		return route{
			info: record.RouteInfo{Kind: record.RouteGateway, Authenticate: login.Method, Gateway: login.BaseURL, Dialect: string(dialect),
				Conditions: []string{"the client declares clientCapabilities.auth._meta.gateway, and logs in with the agent's gateway login (protocol " + protocol + ")"}},
			login:  &probe.Authenticate{MethodID: login.Method, Meta: login.Meta()},
			client: clientprofile.Gateway(),
		}, true
	}
	return route{}, false
}

// firstHandshake runs the agent once in the sandbox, initialize only, as a client that
// accepts gateway logins, and returns the auth methods and the agentInfo name it answered.
func (o Options) firstHandshake(ctx context.Context, cmd transport.Command, box *sandbox.Sandbox) (methods []json.RawMessage, name string) {
	first := o.Probe
	first.Log = nil
	first.Launcher = acpprobe.Sandboxed(box, cmd)
	first.InitializeOnly = true
	first.Steps = nil
	first.ClientCapabilities = clientprofile.WithGateway(o.Probe.ClientCapabilities)
	log, err := probe.Drive(ctx, first)
	if err != nil {
		return nil, ""
	}
	r := derive.Connection(ctx, record.New(log.Frames()), nil)
	if r.AgentInfo != nil {
		name = r.AgentInfo.Name
	}
	return r.AuthMethods, name
}

// npmRunners are the programs that run an npm package named by their first argument that is
// not a flag.
var npmRunners = []string{"npx", "bunx", "pnpx"}

// keysOf adds to k what the command says of the agent: its program's name (the script's
// when node runs one: the SDK's bundled cli/bin/codebuddy is "codebuddy"), and the npm
// package an npx-style runner starts.
func keysOf(k emulator.Keys, argv []string) emulator.Keys {
	if len(argv) == 0 {
		return k
	}
	prog := filepath.Base(argv[0])
	args := argv[1:]
	if prog == "node" || prog == "nodejs" || prog == "bun" {
		for i, a := range args {
			if !strings.HasPrefix(a, "-") {
				prog, args = filepath.Base(a), args[i+1:]
				break
			}
		}
	}
	if slices.Contains(npmRunners, prog) {
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			k.Package = a
			break
		}
		return k
	}
	k.Program = prog
	return k
}
