package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/acpprobe/acpprobe/internal/cli"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Init() // the namespace helper of --isolate=net is this binary, re-executed
	testscript.Main(m, map[string]func(){
		"acpprobe": func() {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := cli.Main(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
			stop()
			os.Exit(code)
		},
	})
}

// TestScripts runs the txtar scripts in testdata/script. Besides the standard commands they
// can use:
//
//	exitcode N cmd args...      run cmd and require exit status N (stdout/stderr kept)
//	jsoneq FILE POINTER VALUE   the JSON in FILE (or stdout/stderr) has VALUE (JSON, $VARS
//	                            expanded) at POINTER
//	validresult FILE            FILE holds a result that matches report/result.schema.json
//	sameresult A B              two results agree on everything but times, pids, commands
//	                            and transcript line numbers
//	fits FILE N                 no line of FILE (or stdout/stderr) is wider than N columns
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			// Agents spawned by the script are -race test binaries: no exit sleep.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
		// [net]: the net level of --isolate works here.
		Condition: func(cond string) (bool, error) {
			if cond != "net" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			return sandbox.Available().Net, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":    cmdExitCode,
			"jsoneq":      cmdJSONEq,
			"validresult": cmdValidResult,
			"sameresult":  cmdSameResult,
			"fits":        cmdFits,
		},
	})
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	got, err := exitStatus(ts.Exec(args[1], args[2:]...))
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// exitStatus is the exit status of a command that ended with err (0 when err is nil), or err
// when the command did not run to an exit.
func exitStatus(err error) (int, error) {
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		return exitErr.ExitCode(), nil
	case err != nil:
		return 0, err
	}
	return 0, nil
}

func cmdFits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: fits FILE N")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("fits: %v", err)
	}
	wide := ""
	for _, line := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if render.Width(line) > n {
			wide = line
			break
		}
	}
	if (wide == "") == neg {
		ts.Fatalf("fits: %s has a line of %d columns (want at most %d): %q", args[0], render.Width(wide), n, wide)
	}
}

func cmdJSONEq(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsoneq FILE POINTER VALUE")
	}
	var doc, want any
	text := ts.ReadFile(args[0])
	// stderr may hold a JSON line among others: use the last line that parses.
	if args[0] == "stderr" {
		lines := strings.Split(strings.TrimSpace(text), "\n")
		text = lines[len(lines)-1]
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		ts.Fatalf("jsoneq: %s is not JSON: %v", args[0], err)
	}
	// Single-quoted script words are not expanded; expand $VARS in the value here.
	if err := json.Unmarshal([]byte(os.Expand(args[2], ts.Getenv)), &want); err != nil {
		ts.Fatalf("jsoneq: value %q is not JSON: %v", args[2], err)
	}
	got, ok := pointer(doc, args[1])
	equal := ok && reflect.DeepEqual(got, want)
	if equal == neg {
		gotJSON, _ := json.Marshal(got)
		ts.Fatalf("jsoneq: %s at %s is %s (found: %v), want %s%s", args[0], args[1], gotJSON, ok, map[bool]string{true: "not ", false: ""}[neg], args[2])
	}
}

// pointer resolves an RFC 6901 JSON pointer.
func pointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := doc.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			doc = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			doc = v[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

func cmdValidResult(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: validresult FILE")
	}
	err := report.ValidateResult([]byte(ts.ReadFile(args[0])))
	if (err == nil) == neg {
		ts.Fatalf("validresult %s: %v", args[0], err)
	}
}

func cmdSameResult(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sameresult A B")
	}
	a, b := structural(ts, args[0]), structural(ts, args[1])
	if reflect.DeepEqual(a, b) == neg {
		ja, _ := json.MarshalIndent(a, "", " ")
		jb, _ := json.MarshalIndent(b, "", " ")
		ts.Fatalf("results differ (neg=%v):\n%s\n---\n%s", neg, ja, jb)
	}
}

// structural is the result in file, structurally (structuralDoc).
func structural(ts *testscript.TestScript, file string) map[string]any {
	doc, err := structuralDoc([]byte(ts.ReadFile(file)))
	if err != nil {
		ts.Fatalf("%s: %v", file, err)
	}
	return doc
}

// structuralDoc is a result document without what legitimately differs between two probes of
// the same agent: times, pids, the command, transcript line numbers, the processes of the
// teardown.
func structuralDoc(data []byte) (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	delete(doc, "agent")
	delete(doc, "timings")
	delete(doc, "stderrTail")
	delete(doc, "stderrBytes")
	if e := asMap(doc["error"]); e != nil {
		delete(e, "stderr") // a copy of stderrTail
	}
	if ext := asMap(doc["extensions"]); ext != nil {
		for _, list := range ext {
			for _, item := range asList(list) {
				for _, w := range asList(asMap(item)["where"]) {
					delete(asMap(w), "seq")
				}
			}
		}
	}
	if x, ok := doc["exit"].(map[string]any); ok {
		delete(x, "afterStdinCloseMs")
	}
	// The agent's other processes have their own pids, and a tap in between is one more
	// (the agent behind it runs in a session of its own).
	delete(asMap(doc["sideEffects"]), "processes")
	for _, m := range asMap(doc["methods"]) {
		delete(asMap(m), "ms")
	}
	for _, f := range asList(doc["findings"]) {
		delete(asMap(f), "seq")
	}
	if ps := asMap(doc["promptShapes"]); ps != nil {
		for _, p := range asList(ps["probes"]) {
			delete(asMap(p), "seq")
		}
	}
	for _, s := range asList(asMap(doc["zeroMeta"])["steps"]) {
		delete(asMap(s), "seq")
		delete(asMap(s), "answerSeq")
	}
	return doc, nil
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }
