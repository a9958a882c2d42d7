package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
)

// isolateFlags are the flags of isolation and of the auth oracle, in one place for every
// command that launches an agent for a report (probe, check, matrix, turn): --isolate[=net],
// --isolate=off, --keep-sandbox DIR, --pass-env NAME (repeatable), --auth-ab.
type isolateFlags struct {
	level  isolateLevel
	keep   string
	pass   multiFlag
	authAB bool
	def    record.Level // the command's default: record.LevelNone or LevelEnvHome
}

// register defines the flags on fs; def is the command's default level (LevelNone: probe,
// check; LevelEnvHome: matrix, turn).
func (f *isolateFlags) register(fs *flag.FlagSet, def record.Level) {
	dflt := "off"
	if def != record.LevelNone {
		dflt = "on"
	}
	fs.Var(&f.level, "isolate", "run the agent in a throwaway sandbox: its own HOME, TMPDIR and workspace, a reduced environment, browser launches recorded (--isolate=net: also no network but its loopback; --isolate=off: with your HOME and environment) (default "+dflt+")")
	f.registerSandbox(fs, "; implies --isolate")
	f.def = def
	fs.BoolVar(&f.authAB, "auth-ab", false, "also run the agent with the other identity (yours, or an empty one in a sandbox) and classify its authentication from both: authenticated, auth_required, no_auth_needed, hidden_auth or unknown (never logs in or out)")
}

// registerTurn defines the flags for turn, whose agent always runs sandboxed (see
// turnSandbox): --isolate (bare: env+home, the default; =net), --keep-sandbox, --pass-env, and
// --auth-ab, which prompt turns refuse with the reason.
func (f *isolateFlags) registerTurn(fs *flag.FlagSet) {
	fs.Var(&f.level, "isolate", "the agent's sandbox: bare, its own HOME, TMPDIR and workspace and a reduced environment (the default); --isolate=net: also no network but its loopback, where the model emulator and the MCP sentinels are served and anything else it tries is recorded (name the agent by its id, or give --backend: its name is not learned first); never =off, prompt turns only run sandboxed")
	f.registerSandbox(fs, "")
	fs.BoolVar(&f.authAB, "auth-ab", false, "refused with prompt turns: their agent is logged in to the model emulator with a dummy key, so there is no identity of yours to compare (use it with probe or check)")
}

// registerSandbox defines only the flags of the sandbox itself, --keep-sandbox and --pass-env.
func (f *isolateFlags) registerSandbox(fs *flag.FlagSet, implies string) {
	f.def = record.LevelEnvHome
	fs.StringVar(&f.keep, "keep-sandbox", "", "keep the agent's sandbox in this directory (absent or empty) for inspection"+implies)
	fs.Var(&f.pass, "pass-env", "pass this variable of your environment to the isolated agent (repeatable; credentials are dropped otherwise)"+implies)
}

// sandboxOptions are the sandbox the flags ask for (nil: not isolated). target is the probe
// of the agent, whose --cwd (explicit says whether it was given) becomes the sandbox's
// workspace; without one, the agent gets the sandbox's own workspace, so target is changed
// to leave its directory to the sandbox.
func (f *isolateFlags) sandboxOptions(target *probe.Options, explicitCwd bool) (*sandbox.Options, error) {
	level := f.def
	switch {
	case f.level.set:
		level = f.level.level
	case f.keep != "" || len(f.pass) > 0:
		level = record.LevelEnvHome
	}
	if level == record.LevelNone {
		if f.keep != "" || len(f.pass) > 0 {
			return nil, usagef("--keep-sandbox and --pass-env need the sandbox: they contradict --isolate=off")
		}
		return nil, nil
	}
	if level == record.LevelNet {
		if c := sandbox.Available(); !c.Net {
			return nil, usagef("--isolate=net is not available here: %s", c.NetUnavailable)
		}
	}
	so := &sandbox.Options{KeepDir: f.keep, PassEnv: f.pass, Net: level == record.LevelNet, NetSink: level == record.LevelNet}
	if cmd, ok := target.Launcher.(transport.Command); ok {
		wd, _ := os.Getwd()
		if explicitCwd || (cmd.Dir != "" && cmd.Dir != wd) {
			so.Workspace = target.Cwd
		} else {
			cmd.Argv = absProgram(cmd.Argv, cmd.Dir)
			cmd.Dir, target.Cwd = "", ""
			target.Launcher = cmd
		}
	}
	return so, nil
}

// absProgram makes a program named by a relative path (./agent) absolute against dir, so
// that it still runs from the sandbox's workspace.
func absProgram(argv []string, dir string) []string {
	if len(argv) == 0 || filepath.IsAbs(argv[0]) || !strings.ContainsRune(argv[0], filepath.Separator) {
		return argv
	}
	out := append([]string(nil), argv...)
	out[0] = filepath.Join(dir, argv[0])
	if abs, err := filepath.Abs(out[0]); err == nil {
		out[0] = abs
	}
	return out
}

// apply puts what the flags ask for into the options of a probe (probe, check), whose
// flags fs were parsed.
func (f *isolateFlags) apply(o *ProbeOptions, fs *flag.FlagSet) error {
	so, err := f.sandboxOptions(&o.Target, flagGiven(fs, "cwd"))
	if err != nil {
		return err
	}
	o.Isolate, o.AuthAB = so, f.authAB
	o.Recording.Secrets = append(o.Recording.Secrets, f.passedValues()...)
	return nil
}

// passedValues are the values --pass-env hands the isolated agent: like the values of --env,
// they are secrets to the redactor whatever their names (every value acpprobe gives an agent
// on purpose is one).
func (f *isolateFlags) passedValues() []string {
	var out []string
	for _, name := range f.pass {
		if v, ok := os.LookupEnv(name); ok {
			out = append(out, v)
		}
	}
	return out
}

// turnSandbox is the sandbox of prompt turns (turn, check --turns, matrix --turns): env+home
// by default, or net (--isolate=net: the model emulator and the sentinels are served inside the
// agent's network namespace), never none, since the agent is configured to call the emulator
// through files and variables of a throwaway HOME. The auth oracle's second identity has no
// meaning against the emulator's dummy key. target's --env values are taken off its command:
// the sandbox sets them (turnFlags.options).
func (f *isolateFlags) turnSandbox(target *probe.Options, explicitCwd bool) (sandbox.Options, error) {
	if f.level.set && f.level.level == record.LevelNone {
		return sandbox.Options{}, usagef("--isolate=%s: prompt turns only run sandboxed (the agent is pointed at the model emulator through a throwaway HOME); use --isolate or --isolate=net", f.level.level)
	}
	if f.authAB {
		return sandbox.Options{}, usagef("--auth-ab does not go with prompt turns: their agent is logged in to the model emulator with a dummy key, so there is no identity of yours to compare (use it with probe or check)")
	}
	g := *f
	g.def = record.LevelEnvHome
	so, err := g.sandboxOptions(target, explicitCwd)
	if err != nil {
		return sandbox.Options{}, err
	}
	if cmd, ok := target.Launcher.(transport.Command); ok {
		cmd.Env = nil
		target.Launcher = cmd
	}
	return *so, nil
}

// flagGiven says whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// isolateLevel is the value of --isolate: bare it means env+home; =net, =off (or on, true,
// false, none) say which.
type isolateLevel struct {
	level record.Level
	set   bool
}

func (l *isolateLevel) String() string {
	if !l.set {
		return ""
	}
	return string(l.level)
}

func (l *isolateLevel) Set(v string) error {
	switch strings.ToLower(v) {
	case "true", "on", "env+home", "home":
		l.level = record.LevelEnvHome
	case "net":
		l.level = record.LevelNet
	case "false", "off", "none":
		l.level = record.LevelNone
	default:
		return fmt.Errorf("want --isolate, --isolate=net or --isolate=off, got %q", v)
	}
	l.set = true
	return nil
}

// IsBoolFlag lets --isolate stand alone (flag.Value's optional method).
func (l *isolateLevel) IsBoolFlag() bool { return true }
