package acpprobe

import (
	"context"
	"os"

	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transcript"
	"github.com/acpprobe/acpprobe/transport"
)

// authOther runs the identities of --auth-ab that the main run (whose isolation ob says) does
// not stand for, and records what each showed in log (auth-identity events). user is the
// probe as the caller asked for it, before any sandbox.
func authOther(ctx context.Context, o Options, user probe.Options, ob *observer, log *jsonrpc.Log) {
	iso := record.Isolation{Level: record.LevelNone}
	if ob != nil {
		iso = ob.iso
	}
	main := derive.MainIdentity(iso)
	for _, id := range []record.Identity{record.IdentityUser, record.IdentityIsolated} {
		if id == main || ctx.Err() != nil {
			continue
		}
		record.AuthIdentity.Emit(log, runIdentity(ctx, o, user, id))
	}
}

// runIdentity probes the agent once more under identity id — the handshake, auth/status when
// advertised, no method detection and no active check — and returns the auth facts of that
// run. The user's identity is the user's HOME and environment (the browser shims on PATH),
// in a working directory of its own unless one was given; the isolated one is a fresh
// sandbox at the level asked for (env+home when none was) with no credential variable: the
// credential-looking names the user gave on purpose are left out too.
func runIdentity(ctx context.Context, o Options, user probe.Options, id record.Identity) record.AuthIdentityInfo {
	failed := func(err error) record.AuthIdentityInfo {
		return record.AuthIdentityInfo{Identity: id, SessionNew: record.SessionNewNotCalled, StatusUpdates: []string{},
			AuthMethods: []string{}, Credentials: []string{}, Error: err.Error()}
	}
	cmd, ok := user.Launcher.(transport.Command)
	if !ok {
		return failed(errNotProcess)
	}
	po := user
	po.SkipMethods, po.WaitForExit, po.InitializeOnly = true, false, false
	po.Authenticate = nil // never a login, in either identity
	po.Steps = []probe.Step{probe.AuthStatusStep}
	sub := Options{Analyze: AnalyzeOptions{Catalogue: o.Analyze.Catalogue, Schema: o.Analyze.Schema}, NoRedact: o.NoRedact}
	switch id {
	case record.IdentityUser:
		if o.Isolate != nil || o.Sandbox != nil {
			// The main run's directory was the sandbox's (or one given with --cwd).
			dir := ""
			if o.Isolate != nil {
				dir = o.Isolate.Workspace
			}
			if dir == "" {
				fresh, remove, err := freshDir("acpprobe-auth-ab-")
				if err != nil {
					return failed(err)
				}
				defer remove()
				dir = fresh
			}
			po.Cwd, cmd.Dir = dir, dir
		}
	case record.IdentityIsolated:
		so := sandbox.Options{}
		if o.Isolate != nil {
			so = *o.Isolate
		} else if o.Sandbox != nil && o.Sandbox.Level() == record.LevelNet {
			so.Net = true
		}
		so.KeepDir, so.Ports = "", nil
		so.Env = withoutCredentials(append(append([]string(nil), so.Env...), cmd.Env...))
		so.PassEnv = withoutCredentials(so.PassEnv)
		cmd.Env = nil
		if so.Workspace == "" {
			po.Cwd, cmd.Dir = "", ""
		}
		sub.Isolate = &so
	}
	po.Launcher = cmd
	po.Log = newLog(po.Launcher, o)
	sub.Probe = po
	r, err := Run(ctx, sub)
	if err != nil {
		return failed(err)
	}
	main := record.Split(po.Log.Frames()).Main
	iso := record.Isolation{Level: record.LevelNone}
	if r.SideEffects != nil {
		iso = r.SideEffects.Isolation
	}
	facts := derive.IdentityFacts(record.New(main), r, id, iso)
	if r.SideEffects != nil {
		facts.Files = r.SideEffects.Files
	}
	return facts
}

// newLog is the log of a run Run makes itself: redacted (the secrets on the command line, in
// the environment, under the catalogue's credential keys) unless o.NoRedact.
func newLog(l transport.Launcher, o Options) *jsonrpc.Log {
	log := jsonrpc.NewLog()
	if !o.NoRedact && l != nil {
		cat := o.Analyze.Catalogue
		if cat == nil {
			cat = extensions.Default()
		}
		red := transcript.NewRedactor(transcript.SecretArgs(l.CommandLine()), os.Environ(), cat.CredentialKeys())
		log.SetFilter(red.Frame)
	}
	return log
}

// recordNotIsolated records that isolation was asked for an agent that is not a process:
// nothing was isolated or observed.
func recordNotIsolated(log *jsonrpc.Log) {
	record.SideEffects.Emit(log, record.SideEffectsInfo{
		Isolation: record.Isolation{Level: record.LevelNone, Requested: record.LevelEnvHome, Credentials: []string{},
			Note: errNotProcess.Error() + ": nothing was isolated, and nothing it did to the machine was observed"},
		Browser: record.Browser{Launches: []record.BrowserLaunch{}},
		Network: record.Network{Lookups: []string{}, Connects: []record.Connect{}, Note: "not observed"},
	})
}
