package acptest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// Main runs the reference agent as a program: it parses args (the flags of `acpprobe agent`),
// serves stdin/stdout until stdin ends, a fault fires or ctx ends (a signal), and returns the
// exit status. Test binaries re-execute themselves through it to get a real agent process.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, fs, err := parseArgs(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "Usage: acpprobe agent [flags]\n\nRuns the reference ACP agent on stdin/stdout.\n\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintln(stderr, "acpprobe agent:", err)
		return 2
	}
	cfg.Env = os.Environ()
	if cfg.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
		ctx = context.WithoutCancel(ctx)
	}
	err = Serve(ctx, stdin, stdout, stderr, cfg)
	var exit *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.Code
	case ctx.Err() != nil:
		return 128 + 15 // stopped by a signal: the status a shell reports for SIGTERM
	}
	fmt.Fprintln(stderr, "acpprobe agent:", err)
	return 1
}

// Flags is the flag set of `acpprobe agent`, for a help that prints it (acpprobe's own, which
// spells flags as its other commands do).
func Flags() *flag.FlagSet {
	_, fs, _ := parseArgs(nil)
	return fs
}

// parseArgs reads the flags of `acpprobe agent` (the inverse of Config.Args).
func parseArgs(args []string) (Config, *flag.FlagSet, error) {
	fs := flag.NewFlagSet("acpprobe agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg Config
	fs.StringVar(&cfg.Persona, "persona", "claude", "persona: "+strings.Join(PersonaNames(), ", "))
	fs.StringVar(&cfg.HangOn, "hang-on", "", "stop answering (and reading) when this method arrives")
	fs.StringVar(&cfg.ExitBefore, "exit-before", "", fmt.Sprintf("exit with status %d when this method arrives, before answering", ExitBeforeStatus))
	fs.BoolVar(&cfg.GarbageStdout, "garbage-stdout", false, "write a line that is not JSON on stdout before the first answer")
	fs.DurationVar(&cfg.SlowStart, "slow-start", 0, "wait this long before reading anything (e.g. 2s)")
	fs.IntVar(&cfg.AnswerVersion, "answer-version", 0, "answer initialize with this protocolVersion instead of the persona's")
	fs.BoolVar(&cfg.StdoutBanner, "stdout-banner", false, "write a log line on stdout at start")
	fs.BoolVar(&cfg.BadEnvelope, "bad-envelope", false, "follow the initialize answer with an unknown-id response, a result+error response and a notification without jsonrpc")
	fs.BoolVar(&cfg.WrongInvalidParamsCode, "wrong-code-for-invalid-params", false, "answer invalid params with -32603 instead of -32602")
	fs.BoolVar(&cfg.AnswerNotifications, "answer-notifications", false, "answer unknown notifications with an error (as codex-acp does)")
	fs.BoolVar(&cfg.IgnoreStdinEOF, "ignore-stdin-eof", false, "keep running after stdin closes, until signalled")
	fs.BoolVar(&cfg.ExtraKeys, "extra-keys", false, "add keys outside _meta to the initialize answer")
	fs.BoolVar(&cfg.IgnoreUnknownRequests, "ignore-unknown-requests", false, "leave requests for unknown methods unanswered")
	fs.BoolVar(&cfg.GenericErrors, "generic-errors", false, "answer unknown methods and invalid params alike with -32603 Internal error")
	fs.Int64Var(&cfg.StderrFlood, "stderr-flood", 0, "write this many bytes on stderr before the first answer")
	fs.IntVar(&cfg.HugeLine, "huge-line", 0, "write a valid notification line of this many bytes before the first answer")
	fs.IntVar(&cfg.HugeAnswers, "huge-answers", 0, "pad every result (initialize, session/new, each prompt…) with a _meta string of this many bytes")
	fs.BoolVar(&cfg.WrongID, "wrong-id", false, "answer initialize with another id")
	fs.BoolVar(&cfg.DuplicateID, "duplicate-id", false, "answer initialize twice")
	fs.BoolVar(&cfg.InvalidBytes, "invalid-bytes", false, "write a line with invalid UTF-8 and NUL bytes before the first answer")
	fs.IntVar(&cfg.Notifications, "notifications", 0, "send this many session/update notifications before answering session/new")
	fs.DurationVar(&cfg.Drip, "drip", 0, "write every output byte on its own, this long apart")
	fs.StringVar(&cfg.CloseStdoutBefore, "close-stdout-before", "", "close stdout when this method arrives and keep running")
	fs.BoolVar(&cfg.ExitImmediately, "exit-immediately", false, "exit with status 0 before reading anything")
	fs.BoolVar(&cfg.Grandchild, "grandchild", false, "start a process that inherits stdout and outlives the agent")
	fs.BoolVar(&cfg.SetsidDaemon, "setsid-daemon", false, "start a process in a session of its own that outlives the agent")
	fs.BoolVar(&cfg.IgnoreSIGTERM, "ignore-sigterm", false, "ignore SIGTERM (only SIGKILL stops the agent)")
	fs.BoolVar(&cfg.NetEffects, "net-effects", false, "on session/new, look up "+NetEffectsHost+" and connect to "+NetEffectsAddr+" (only inside a net-level sandbox: it reaches the network otherwise)")
	fs.BoolVar(&cfg.SideEffects, "side-effects", false, "write into $HOME, $XDG_CONFIG_HOME and $TMPDIR, start a setsid daemon, open a login URL with xdg-open on session/new, leave a child per session/load")
	fs.BoolVar(&cfg.Drift, "drift", false, "play the next release of the persona: version 0.2.0, session/delete advertised and implemented")
	fs.BoolVar(&cfg.ForkAnySession, "fork-any-session", false, "answer session/fork of a session that does not exist with a new session (as sudocode does)")
	fs.BoolVar(&cfg.RequireAdmission, "require-admission", false, "refuse session/new without codebuddy.ai/sessionAdmissionV2 _meta (a private-channel demand)")
	for _, f := range modelFlags(&cfg.ModelFaults) {
		fs.BoolVar(f.on, f.name, false, f.usage)
	}
	fs.StringVar(&cfg.RequireAuthEnv, "require-auth-env", "", "refuse session/new (-32000) unless this variable has a value; advertise and answer auth/status, push _auth/status_update")
	fs.Func("leak-env", "write this environment variable's value on stderr and in the initialize answer (repeatable)", func(name string) error {
		cfg.LeakEnv = append(cfg.LeakEnv, name)
		return nil
	})
	fs.Func("request", "before answering session/new, send the client a request for this method (repeatable)", func(m string) error {
		cfg.ClientRequests = append(cfg.ClientRequests, m)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return cfg, fs, err
	}
	if fs.NArg() > 0 {
		return cfg, fs, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if _, ok := LookupPersona(cfg.Persona); !ok {
		return cfg, fs, fmt.Errorf("unknown persona %q (have %s)", cfg.Persona, strings.Join(PersonaNames(), ", "))
	}
	return cfg, fs, nil
}

// Args renders a configuration as `acpprobe agent` flags, the inverse of Main's parsing.
func (c Config) Args() []string {
	args := []string{"--persona", c.Persona}
	if c.HangOn != "" {
		args = append(args, "--hang-on", c.HangOn)
	}
	if c.ExitBefore != "" {
		args = append(args, "--exit-before", c.ExitBefore)
	}
	if c.GarbageStdout {
		args = append(args, "--garbage-stdout")
	}
	if c.SlowStart > 0 {
		args = append(args, "--slow-start", c.SlowStart.String())
	}
	if c.AnswerVersion != 0 {
		args = append(args, "--answer-version", strconv.Itoa(c.AnswerVersion))
	}
	for _, m := range c.ClientRequests {
		args = append(args, "--request", m)
	}
	if c.StderrFlood > 0 {
		args = append(args, "--stderr-flood", strconv.FormatInt(c.StderrFlood, 10))
	}
	if c.HugeLine > 0 {
		args = append(args, "--huge-line", strconv.Itoa(c.HugeLine))
	}
	if c.Notifications > 0 {
		args = append(args, "--notifications", strconv.Itoa(c.Notifications))
	}
	if c.Drip > 0 {
		args = append(args, "--drip", c.Drip.String())
	}
	if c.RequireAuthEnv != "" {
		args = append(args, "--require-auth-env", c.RequireAuthEnv)
	}
	if c.CloseStdoutBefore != "" {
		args = append(args, "--close-stdout-before", c.CloseStdoutBefore)
	}
	for _, name := range c.LeakEnv {
		args = append(args, "--leak-env", name)
	}
	for _, f := range modelFlags(&c.ModelFaults) {
		if *f.on {
			args = append(args, "--"+f.name)
		}
	}
	for _, f := range []struct {
		on   bool
		flag string
	}{
		{c.StdoutBanner, "--stdout-banner"}, {c.BadEnvelope, "--bad-envelope"}, {c.WrongInvalidParamsCode, "--wrong-code-for-invalid-params"},
		{c.AnswerNotifications, "--answer-notifications"}, {c.IgnoreStdinEOF, "--ignore-stdin-eof"}, {c.ExtraKeys, "--extra-keys"},
		{c.IgnoreUnknownRequests, "--ignore-unknown-requests"}, {c.GenericErrors, "--generic-errors"}, {c.RequireAdmission, "--require-admission"}, {c.ForkAnySession, "--fork-any-session"}, {c.Drift, "--drift"},
		{c.WrongID, "--wrong-id"}, {c.DuplicateID, "--duplicate-id"}, {c.InvalidBytes, "--invalid-bytes"},
		{c.ExitImmediately, "--exit-immediately"}, {c.Grandchild, "--grandchild"}, {c.SetsidDaemon, "--setsid-daemon"},
		{c.IgnoreSIGTERM, "--ignore-sigterm"}, {c.SideEffects, "--side-effects"}, {c.NetEffects, "--net-effects"},
	} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	return args
}

// modelFlag is one boolean flag of the model persona's faults.
type modelFlag struct {
	on          *bool
	name, usage string
}

// modelFlags lists the flags of the ModelFaults: Main parses them and Args renders them from
// this one list.
func modelFlags(m *ModelFaults) []modelFlag {
	return []modelFlag{
		{&m.WriteWithoutPermission, "write-without-permission", "model persona: the Write tool writes without asking for permission"},
		{&m.WriteAfterReject, "write-after-reject", "model persona: the Write tool writes even when permission is refused"},
		{&m.IgnoreModel, "ignore-model", "model persona: always ask the model for the default model"},
		{&m.IgnoreThoughtLevel, "ignore-thought-level", "model persona: always ask the model for the default effort"},
		{&m.IgnoreCancel, "ignore-cancel", "model persona: ignore session/cancel (the turn ends end_turn)"},
		{&m.UpdatesAfterAnswer, "updates-after-answer", "model persona: send an agent_message_chunk after each session/prompt answer"},
		{&m.TextAsThought, "text-as-thought", "model persona: send the model's text as agent_thought_chunk only"},
		{&m.DropBlocks, "drop-blocks", "model persona: accept every prompt block but send only the text ones to the model"},
		{&m.NoMCP, "no-mcp", "model persona: never connect to the MCP servers given"},
		{&m.HideMCPTools, "hide-mcp-tools", "model persona: connect and list MCP tools, but never offer them to the model"},
		{&m.DeferMCPTools, "defer-mcp-tools", "model persona: name the MCP tools in the system prompt and offer them only once a ToolSearch call finds them"},
		{&m.LoadWithoutToolCalls, "load-without-tool-calls", "model persona: session/load replays messages but not tool calls"},
		{&m.LeakOnLoad, "leak-on-load", "model persona: every session/load starts a child process that is never reaped"},
		{&m.CloseKeeps, "close-keeps", "model persona: session/close answers but does not free the session"},
		{&m.RefuseLastValue, "refuse-last-value", "model persona: session/set_config_option refuses the last value each option lists"},
		{&m.ResumeReplays, "resume-replays", "model persona: session/resume replays the history as session/load does"},
		{&m.ResumeNotice, "resume-notice", "model persona: session/resume sends a fresh notice as an agent_message_chunk (not history)"},
		{&m.AutoByDefault, "auto-by-default", "model persona: sessions start in mode auto, which writes without asking"},
	}
}
