package cli

import (
	"context"
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/acpprobe/acpprobe/clientprofile"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/report"
)

// clientFlags are --client-profile and --require (probe, check, turn, matrix).
type clientFlags struct {
	profile string
	require string
	list    bool // --client-profile takes a list (probe)
}

// register defines --client-profile and --require on fs; list says whether --client-profile
// takes several profiles.
func (c *clientFlags) register(fs *flag.FlagSet, list bool) {
	c.registerProfile(fs, list)
	fs.StringVar(&c.require, "require", "", "a host's checklist: comma-separated requirements (loadSession, mcp.http, sessionCapabilities.close, auth.gateway, session/list, _meta.KEY, …; README \"A host's checklist\"), each met, missing or unverified; exit 6 when one is missing, 7 when one is unverified")
}

// registerProfile defines --client-profile on fs (list: it takes several profiles).
func (c *clientFlags) registerProfile(fs *flag.FlagSet, list bool) {
	c.list = list
	usage := "the client acpprobe says it is in initialize: " + strings.Join(clientprofile.Names(), ", ") +
		" (clientCapabilities and clientInfo of that host), or the path of a profile file; files and terminals are still refused and elicitations declined"
	if list {
		usage += "; a comma-separated list probes once per profile and reports what differs"
	}
	fs.StringVar(&c.profile, "client-profile", clientprofile.Default, usage)
}

// profiles are the profiles --client-profile names (none when it was not given) and the
// requirements of --require.
func (c *clientFlags) profiles(fs *flag.FlagSet) ([]clientprofile.Profile, []string, error) {
	var ps []clientprofile.Profile
	if flagGiven(fs, "client-profile") || flagGiven(fs, "client-profiles") { // matrix has both names
		var err error
		if ps, err = clientprofile.LoadList(c.profile); err != nil {
			return nil, nil, clientProfileError(err)
		}
		if len(ps) > 1 && !c.list {
			return nil, nil, usagef("--client-profile: one profile here (probe --client-profile A,B,… compares several)")
		}
	}
	var req []string
	if flagGiven(fs, "require") {
		var err error
		if req, err = clientprofile.ParseRequirements(c.require); err != nil {
			return nil, nil, usagef("--require: %v", err)
		}
	}
	return ps, req, nil
}

// clientProfileError is a usage error for a name that is not a profile or a bad list, a file
// error for a profile file that cannot be read or is not valid.
func clientProfileError(err error) error {
	if errors.Is(err, clientprofile.ErrUnknown) || errors.Is(err, clientprofile.ErrList) {
		return usagef("--client-profile: %v", err)
	}
	return readError("the client profile", err)
}

// apply sets opts (and the probe it drives) from the flags: one profile's clientCapabilities
// and clientInfo, the checklist.
func (c *clientFlags) apply(opts *ProbeOptions, fs *flag.FlagSet) error {
	ps, req, err := c.profiles(fs)
	if err != nil {
		return err
	}
	if len(ps) > 1 && opts.Recording.Transcript != "" {
		return usagef("--transcript records one session: give one --client-profile with it")
	}
	opts.Clients, opts.Require = ps, req
	if len(ps) == 1 {
		asClient(&opts.Target, ps[0])
	}
	return nil
}

// asClient makes target say it is profile p's host.
func asClient(target *probe.Options, p clientprofile.Profile) {
	target.ClientCapabilities, target.ClientInfo = p.ClientCapabilities, p.ClientInfo
}

// judgeClient adds to r the client profile's section (what the recorded frames declared) and
// the host's checklist.
func (opts *ProbeOptions) judgeClient(r *report.Result, frames []jsonrpc.Frame) {
	var client clientprofile.Profile
	switch {
	case len(opts.Clients) == 1:
		client = opts.Clients[0]
		r.Client = client.Section(frames)
	case opts.Require != nil:
		// The checklist is judged as the default client when none was named; without a
		// checklist the built-in profiles are not decoded at all (about 1 ms of a probe).
		client, _ = clientprofile.Get(clientprofile.Default)
	}
	if opts.Require != nil {
		r.Requirements = clientprofile.Check(r, client, opts.Require)
	}
}

// probeSurface probes the agent once per client profile, in order, and reports what differs
// (render.Surface, or the Surface document with --json). The exit code is the checklist's with
// --require, else the first profile's run that did not end well.
func probeSurface(ctx context.Context, opts *ProbeOptions) error {
	var runs []report.ProfileRun
	for _, p := range opts.Clients {
		one := *opts
		one.Clients = []clientprofile.Profile{p}
		one.Require = nil
		asClient(&one.Target, p)
		r, err := one.result("probe", one.probe(ctx))
		if err != nil {
			return err
		}
		runs = append(runs, report.ProfileRun{Profile: p.Name, Result: r})
		if r.Error != nil && r.Error.Code == report.ErrInterrupted {
			break
		}
	}
	s := clientprofile.Surface(runs)
	if opts.Require != nil {
		s.Requirements = clientprofile.CheckAcross(runs, opts.Clients, opts.Require)
	}
	var err error
	if opts.JSON {
		err = render.JSON(opts.IO.Out, s)
	} else {
		err = render.Surface(render.ScreenOf(opts.IO.Out, os.Getenv), s)
	}
	if err != nil {
		return writeError("the surface by client", err)
	}
	for _, run := range runs {
		if code := resultCode(run.Result); code == ExitInterrupted {
			return errInterrupted
		}
	}
	if s.Requirements != nil {
		return checklistError(s.Requirements)
	}
	for _, run := range runs {
		if resultCode(run.Result) != ExitOK {
			return withJSON(&resultError{r: run.Result}, opts.JSON)
		}
	}
	return nil
}

// errChecklist is a host's checklist that did not pass: a requirement missing (exit 6), or
// none missing and one unverified (exit 7). The report already says which.
type errChecklist struct{ verdict report.RequirementVerdict }

func (e *errChecklist) Error() string { return "the checklist is " + string(e.verdict) }

// checklistError is the error of a checklist's verdict (nil when met).
func checklistError(c *report.Checklist) error {
	if c.Verdict == report.RequirementMet {
		return nil
	}
	return &errChecklist{c.Verdict}
}
