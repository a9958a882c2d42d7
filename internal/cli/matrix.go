package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/clientprofile"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/registry"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transcript"
	"github.com/acpprobe/acpprobe/turn"
)

// MatrixOptions are the options of acpprobe matrix: probe several agents at once and render
// their capability matrix.
type MatrixOptions struct {
	IO Stdio
	// Targets are the agents, in the order of the rows.
	Targets []matrix.Target
	// Parallel bounds the agents probed at once.
	Parallel int
	// Format is the output: text, md (markdown), json or html.
	Format string
	// OutDir, when set, receives each agent's result and transcript, and matrix.json.
	OutDir string
	// NoRedact keeps secrets in the records and results; Secrets are redacted whatever their
	// name (the --env values).
	NoRedact bool
	Secrets  []string
	// Catalogue classifies vendor extensions (the built-in one when nil).
	Catalogue *extensions.Catalogue
	// Turns, when set, runs the prompt-turn scenarios on every agent (--turns), each agent in
	// its own sandbox (Isolate's) with the model emulator as its model; its Keys are each
	// agent's id.
	Turns *turn.Options
	// Isolate, when set, runs each agent in a sandbox of its own made from these options:
	// the default (--isolate=off turns it off).
	Isolate *sandbox.Options
	// AuthAB runs the auth oracle on each agent (--auth-ab).
	AuthAB bool
	// launches are what to say about how each target was launched, in the order of Targets
	// (launchNotes): resolutions before the agents start, npx's failures after.
	launches []launchNotes
}

// matrixFormats are the writers of --format.
var matrixFormats = map[string]func(io.Writer, *matrix.Matrix) error{
	"text": render.MatrixText, "md": render.MatrixMarkdown, "markdown": render.MatrixMarkdown,
	"json": func(w io.Writer, m *matrix.Matrix) error { return render.JSON(w, m) }, "html": render.MatrixHTML,
}

func newMatrixOptions(args []string, stdio Stdio) (*MatrixOptions, error) {
	fs := newFlagSet("matrix")
	var pf probeFlags
	pf.register(fs, jsonFlag|agentsFlag|budgetFlags)
	var iso isolateFlags
	iso.register(fs, record.LevelEnvHome)
	parallel := fs.Int("parallel", matrix.DefaultParallel(), "agents probed at once (default: twice the CPUs, 2 to 16)")
	format := fs.String("format", "text", "output: text, md, json or html")
	outDir := fs.String("out", "", "directory for each agent's result (<id>.json) and transcript (<id>.ndjson), and matrix.json")
	turns := fs.Bool("turns", false, "also run real prompt turns at zero tokens on every agent (see acpprobe turn), each in its own sandbox (env+home, or --isolate=net; never --isolate=off); adds the columns Completion, Model truth, Permission, Cancel")
	var tf turnFlags
	tf.register(fs, true)
	var cf clientFlags
	cf.registerProfile(fs, true)
	fs.StringVar(&cf.profile, "client-profiles", clientprofile.Default, "the same as --client-profile (a list: every agent once per profile, and what differs)")
	if err := parseFlags(fs, args, "acpprobe matrix [IDS...] [--config FILE] [--parallel N] [--format text|md|json|html] [--out DIR]", stdio.Out); err != nil {
		return nil, err
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if pf.json {
		if explicit["format"] && *format != "json" {
			return nil, usagef("--json and --format %s contradict each other (--json is --format json)", *format)
		}
		*format = "json"
	}
	if _, ok := matrixFormats[*format]; !ok {
		return nil, usagef("--format %q: want text, md, json or html", *format)
	}
	if *parallel < 1 {
		return nil, usagef("--parallel %d: want at least 1", *parallel)
	}
	ids := fs.Args()
	if len(ids) == 0 && pf.agents.configFile != "" {
		entries, err := registry.LoadConfig(pf.agents.configFile)
		if err != nil {
			return nil, readError("--config", err)
		}
		for _, e := range entries {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return nil, usagef("name the agents (ids from 'acpprobe agents'), or give --config FILE to probe all its agents")
	}
	cat, err := pf.catalogue()
	if err != nil {
		return nil, err
	}
	if !*turns {
		if set := turnFlagsSet(fs); len(set) > 0 {
			return nil, usagef("%s configure the prompt turns: they need --turns", strings.Join(set, ", "))
		}
	}
	rc := pf.recording()
	opts := &MatrixOptions{IO: stdio, Parallel: *parallel, Format: *format, OutDir: *outDir,
		NoRedact: rc.NoRedact, Secrets: append(rc.Secrets, iso.passedValues()...), Catalogue: cat, AuthAB: iso.authAB}
	if *turns {
		to, err := tf.options(probe.Options{}, pf.env, sandbox.Options{}) // each agent's sandbox: turnRunner
		to.Budget = pf.runBudget(fs)
		if err != nil {
			return nil, err
		}
		opts.Turns = &to
	}
	clients, _, err := cf.profiles(fs)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		target, source, notes, err := pf.resolve(id, explicit)
		if err == nil {
			// Every agent gets a sandbox of its own from the same options; prompt turns run
			// in theirs (turnRunner).
			if *turns {
				var box sandbox.Options
				if box, err = iso.turnSandbox(&target, explicit["cwd"]); err == nil {
					opts.Isolate = &box
				}
			} else {
				opts.Isolate, err = iso.sandboxOptions(&target, explicit["cwd"])
			}
		}
		var (
			nr      *errNotRunnable
			unknown *registry.UnknownAgentError
		)
		switch {
		case errors.As(err, &unknown):
			return nil, usagef("%v", err)
		case errors.As(err, &nr):
			opts.Targets = append(opts.Targets, matrix.Target{ID: id, Source: source, Problem: nr.Error()})
		case err != nil:
			return nil, err
		default:
			opts.Targets = append(opts.Targets, asClients(matrix.Target{ID: id, Source: source, Launch: target.Command, Options: target}, clients)...)
			notes.stale = pf.note(id)
			for range max(len(clients), 1) {
				opts.launches = append(opts.launches, notes)
			}
			continue
		}
		notes.stale = pf.note(id)
		opts.launches = append(opts.launches, notes)
	}
	return opts, nil
}

// asClients is t probed as each client profile (t itself without any): with several, each
// row's id is the agent's, "@" and the profile's name.
func asClients(t matrix.Target, clients []clientprofile.Profile) []matrix.Target {
	if len(clients) == 0 {
		return []matrix.Target{t}
	}
	out := make([]matrix.Target, 0, len(clients))
	for _, p := range clients {
		one := t
		asClient(&one.Options, p)
		one.Agent, one.Profile, one.Client = t.ID, p.Name, &p
		if len(clients) > 1 {
			one.ID = t.ID + "@" + p.Name
		}
		out = append(out, one)
	}
	return out
}

// matrixRun probes the targets, shows the progress on stderr, writes the files of OutDir and
// renders the matrix. Interrupted, it still renders what it has.
func matrixRun(ctx context.Context, opts *MatrixOptions) error {
	boundHeap(opts.Parallel) // a record per agent probed at once
	writer, ok := matrixFormats[opts.Format]
	if !ok {
		return usagef("--format %q: want text, md, json or html", opts.Format)
	}
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o700); err != nil {
			return writeError("--out", err)
		}
	}
	var red *transcript.Redactor
	if !opts.NoRedact {
		secrets := slices.Clone(opts.Secrets)
		for _, t := range opts.Targets {
			if t.Options.Launcher != nil {
				secrets = append(secrets, transcript.SecretArgs(t.Options.Launcher.CommandLine())...)
			}
		}
		red = transcript.NewRedactor(secrets, os.Environ(), catalogueOr(opts.Catalogue).CredentialKeys())
	}
	ids := make([]string, len(opts.Targets))
	for i, t := range opts.Targets {
		ids[i] = t.ID
		if i < len(opts.launches) && opts.launches[i].resolved != "" && t.Problem == "" {
			fmt.Fprintf(opts.IO.Err, "acpprobe matrix: note: %s\n", render.Message(opts.launches[i].resolved))
		}
	}
	progress := render.NewProgress(render.ScreenOf(opts.IO.Err, os.Getenv), ids)
	m := matrix.Run(ctx, opts.Targets, matrix.Options{
		Parallel: opts.Parallel, Check: &acpprobe.Check{}, OutDir: opts.OutDir,
		Redactor: red, Catalogue: opts.Catalogue, Progress: progress.Update, Run: opts.turnRunner(),
		Isolate: opts.Isolate, AuthAB: opts.AuthAB,
	})
	progress.Finish()
	opts.explain(m)
	var fileErr error
	if opts.OutDir != "" {
		fileErr = writeJSONFile(filepath.Join(opts.OutDir, "matrix.json"), m)
	}
	if err := writer(render.ScreenOf(opts.IO.Out, os.Getenv), m); err != nil {
		return writeError("the matrix", err)
	}
	if fileErr != nil {
		return fileErr
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return noneProbed(m)
}

// explain says on stderr, for each agent of m that npx could not fetch, what npm said
// (launchNotes.explain): the row only says the agent ended before initialize; and for each
// agent of the registry's index that could not be probed (it cannot run here, or its probe
// failed as probe would exit 3 for), the note probe and check say (staleNote).
func (opts *MatrixOptions) explain(m *matrix.Matrix) {
	for i, row := range m.Rows {
		if i >= len(opts.launches) || row.ID != opts.Targets[i].ID {
			continue
		}
		notes := opts.launches[i]
		because, hint := notes.explain(row.Result)
		if because != "" {
			fmt.Fprintf(opts.IO.Err, "acpprobe matrix: %s: %s\n", render.Message(row.ID), render.Message(because))
		}
		if hint != "" {
			fmt.Fprintf(opts.IO.Err, "acpprobe matrix: note: %s\n", render.Message(hint))
		}
		cannotRun := opts.Targets[i].Problem != ""
		if notes.stale != "" && (cannotRun || row.Result != nil && resultCode(row.Result) == ExitNotProbed) {
			fmt.Fprintf(opts.IO.Err, "acpprobe matrix: note: %s\n", render.Message(notes.stale))
		}
	}
}

// turnRunner runs one agent's check with the prompt turns (nil without --turns): the agent's
// id chooses its backend profile, and each agent keeps its sandbox in its own directory under
// --keep-sandbox.
func (opts *MatrixOptions) turnRunner() func(context.Context, matrix.Target, acpprobe.Options) (*report.Result, error) {
	if opts.Turns == nil {
		return nil
	}
	return func(ctx context.Context, t matrix.Target, ao acpprobe.Options) (*report.Result, error) {
		o := *opts.Turns
		o.Keys = profileKeys(ao.Probe)
		o.Probe, o.Check, o.Analyze = ao.Probe, ao.Check, ao.Analyze
		// The agent's sandbox as the matrix made it (its own kept directory), with the
		// turns' --env values.
		env := o.Sandbox.Env
		o.Sandbox = *ao.Isolate
		o.Sandbox.Env = env
		return turn.Run(ctx, o)
	}
}

// noneProbed is the error of a matrix in which no agent could be probed: each row says the
// agent could not run here, or its probe failed as probe would exit 3 for (spawn failure,
// timeout, crash, protocol mismatch). An agent that needs authentication was probed: it
// answered initialize. nil when one agent was probed, or the matrix is empty.
func noneProbed(m *matrix.Matrix) error {
	for _, row := range m.Rows {
		if row.Result != nil && resultCode(row.Result) != ExitNotProbed {
			return nil
		}
	}
	if len(m.Rows) == 0 {
		return nil
	}
	return &errNoneProbed{total: len(m.Rows)}
}

// writeJSONFile writes v as indented JSON to path.
func writeJSONFile(path string, v any) error {
	f, err := transcript.CreatePrivate(path)
	if err != nil {
		return writeError(path, err)
	}
	err = render.JSON(f, v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return writeError(path, err)
	}
	return nil
}
