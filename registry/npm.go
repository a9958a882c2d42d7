package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// NPMProblem is npm saying why it could not give a package: read from the error lines npm
// (and npx, which is npm) prints on stderr when a fetch fails.
type NPMProblem struct {
	// Code is npm's error code: ETARGET, E404, or a network code (ENOTFOUND, ETIMEDOUT, …).
	Code string
	// Package is the package's name, when npm's lines name it.
	Package string
	// Version is the version (or range, or tag) npm has no match for, when the package itself
	// is served; "" when npm has no such package, or could not be reached.
	Version string
	// Host is the npm registry's host, when npm's lines name it (a 404's URL).
	Host string
	// Unreachable says npm could not reach its registry: the package may well exist.
	Unreachable bool
}

// Refusal says what npm does not serve, as a reason an agent cannot run: "npm serves no
// version 0.27.3 of @google/gemini-cli", "npm serves no package @tencent-ai/codebuddy-code
// (E404 from registry.npmjs.org)"; "" when npm could not be reached.
func (p *NPMProblem) Refusal() string {
	switch {
	case p.Unreachable:
		return ""
	case p.Version != "":
		return fmt.Sprintf("npm serves no version %s of %s", p.Version, p.Package)
	case p.Host != "":
		return fmt.Sprintf("npm serves no package %s (%s from %s)", p.Package, p.Code, p.Host)
	}
	return fmt.Sprintf("npm serves no package %s (%s)", p.Package, p.Code)
}

// Error says what npm said, in one line: "npm: no version 0.27.3 of @google/gemini-cli",
// "npm: no package @tencent-ai/codebuddy-code in the npm registry registry.npmjs.org (E404)",
// "npm: cannot reach its registry (ENOTFOUND)".
func (p *NPMProblem) Error() string {
	switch {
	case p.Unreachable:
		return fmt.Sprintf("npm: cannot reach its registry (%s)", p.Code)
	case p.Version != "":
		return fmt.Sprintf("npm: no version %s of %s", p.Version, p.Package)
	}
	where := "the npm registry"
	if p.Host != "" {
		where += " " + p.Host
	}
	return fmt.Sprintf("npm: no package %s in %s (%s)", p.Package, where, p.Code)
}

// networkCodes are npm error codes that mean its registry could not be reached.
var networkCodes = []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH",
	"ENETUNREACH", "ENETDOWN", "ESOCKETTIMEDOUT", "ERR_SOCKET_TIMEOUT", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
	"SELF_SIGNED_CERT_IN_CHAIN", "CERT_HAS_EXPIRED"}

var (
	// npmLine is one of npm's error lines: "npm error …" (npm 10 and later) or "npm ERR! …".
	npmLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^npm (?:error|ERR!) ?(.*)$`) })
	// notTarget: ETARGET's "No matching version found for @google/gemini-cli@0.27.3."
	notTarget = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`No matching version found for (\S+?)\.?$`) })
	// noMatch: E404's "404 No match found for version 0.27.3" (npm view, npm 10 and later).
	noMatch = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`No match found for version (\S+)$`) })
	// resource: E404's "The requested resource '@scope/pkg@1.2.3' could not be found".
	resource = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`The requested resource '([^']+)' could not be found`)
	})
	// notFoundURL: E404's "404 Not Found - GET https://registry.npmjs.org/@scope%2fpkg".
	notFoundURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Not Found - GET (\S+)`) })
)

// ParseNPMError reads npm's error lines in stderr (what npm or npx printed when it failed
// to fetch spec, the package spec it was given, "" when unknown) and says what npm could not
// fetch; nil when they hold no such failure (no npm error lines, or an error that is not
// about fetching a package). It reads only lines that start with "npm error" or "npm ERR!",
// as npm writes them; what they do not name (the package, the version) is taken from spec.
func ParseNPMError(stderr, spec string) *NPMProblem {
	var lines []string
	for _, m := range npmLine().FindAllStringSubmatch(stderr, -1) {
		lines = append(lines, strings.TrimSpace(m[1]))
	}
	var code string
	for _, l := range lines {
		if c, ok := strings.CutPrefix(l, "code "); ok {
			code = strings.TrimSpace(c)
			break
		}
	}
	p := &NPMProblem{Code: code}
	switch {
	case slices.Contains(networkCodes, code):
		p.Unreachable = true
		return p
	case code == "ETARGET":
		for _, l := range lines {
			if m := notTarget().FindStringSubmatch(l); m != nil {
				p.Package, p.Version = splitPackage(KindNPX, m[1])
			}
		}
	case code == "E404":
		for _, l := range lines {
			if m := resource().FindStringSubmatch(l); m != nil {
				p.Package, _ = splitPackage(KindNPX, m[1])
			}
			if m := noMatch().FindStringSubmatch(l); m != nil {
				p.Version = m[1]
			}
			if m := notFoundURL().FindStringSubmatch(l); m != nil {
				if u, err := url.Parse(m[1]); err == nil {
					p.Host = u.Host
				}
			}
		}
	default:
		return nil
	}
	name, version := splitPackage(KindNPX, spec)
	if p.Package == "" {
		p.Package = name
	}
	if p.Code == "ETARGET" && p.Version == "" {
		p.Version = version // ETARGET: the package is there, the version is not
	}
	return p
}

// packageHints say how else to get an agent whose npm package the npm registry may not serve.
var packageHints = map[string]string{
	"@tencent-ai/codebuddy-code": `CodeBuddy Code also ships inside npm's @tencent-ai/agent-sdk (0.3.201 bundles CodeBuddy Code 2.117.0): ` +
		`npm install @tencent-ai/agent-sdk@0.3.201, then acpprobe probe -- node_modules/@tencent-ai/agent-sdk/cli/bin/codebuddy --acp; ` +
		`or put that directory's codebuddy on PATH (the id then runs it), or name it in --config FILE: ` +
		`{"agents": {"codebuddy-code": {"command": "/ABSOLUTE/PATH/node_modules/@tencent-ai/agent-sdk/cli/bin/codebuddy", "args": ["--acp"]}}}`,
}

// PackageHint says how else to get the agent of an npm package (by name, without version)
// when npm cannot give it; "" when there is no other way known.
func PackageHint(name string) string { return packageHints[name] }

// NPMServed is what CheckNPM learned of a package version.
type NPMServed string

// What npm said.
const (
	NPMServes    NPMServed = "served"     // npm serves the version (Detail: the version(s) it matched)
	NPMNoVersion NPMServed = "no-version" // npm has the package but not that version
	NPMNoPackage NPMServed = "no-package" // npm has no such package
	NPMUnknown   NPMServed = "unknown"    // npm could not tell (not installed, unreachable, too slow)
)

// NPMCheck is the answer of CheckNPM for one package spec.
type NPMCheck struct {
	Package string    `json:"package"` // the spec asked about: "@google/gemini-cli@0.27.3"
	Served  NPMServed `json:"served"`
	// Detail is the version npm matched (served), or what npm said (otherwise).
	Detail string `json:"detail,omitempty"`

	problem *NPMProblem // what npm refused (no-version, no-package)
}

// DefaultNPMTimeout bounds one CheckNPM question; npm answers in about a second.
const DefaultNPMTimeout = 15 * time.Second

// npmWaitDelay bounds how long CheckNPM waits for npm's output to close after npm was killed
// (a child of npm may hold it open).
const npmWaitDelay = time.Second

// CheckNPM asks npm (the program npmPath) whether it serves the package spec: `npm view SPEC
// version --json --fetch-retries=0`, bounded by timeout, so that an unreachable registry is
// an answer (NPMUnknown) within the timeout, never a hang.
func CheckNPM(ctx context.Context, npmPath, spec string, timeout time.Duration) NPMCheck {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npmPath, "view", spec, "version", "--json", "--fetch-retries=0")
	cmd.WaitDelay = npmWaitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{b: &stdout}, &limited{b: &stderr}
	err := cmd.Run()
	c := NPMCheck{Package: spec}
	switch {
	case ctx.Err() != nil:
		c.Served, c.Detail = NPMUnknown, fmt.Sprintf("npm did not answer within %s", timeout)
	case err == nil:
		var one string
		var many []string
		switch {
		case json.Unmarshal(stdout.Bytes(), &one) == nil && one != "":
			c.Served, c.Detail = NPMServes, one
		case json.Unmarshal(stdout.Bytes(), &many) == nil && len(many) > 0:
			c.Served, c.Detail = NPMServes, strings.Join(many, ", ")
		default:
			// npm 6 answers an unknown version with nothing at all, and exit 0.
			c.problem = &NPMProblem{Package: PackageName(KindNPX, spec), Version: versionOf(spec)}
			c.Served, c.Detail = NPMNoVersion, c.problem.Error()
		}
	default:
		p := ParseNPMError(stderr.String(), spec)
		switch {
		case p == nil:
			c.Served, c.Detail = NPMUnknown, "npm view failed: "+npmFailure(err, stderr.String())
		case p.Unreachable:
			c.Served, c.Detail = NPMUnknown, p.Error()
		default:
			c.problem = p
			c.Served, c.Detail = NPMNoPackage, p.Error()
			if p.Version != "" {
				c.Served = NPMNoVersion
			}
		}
	}
	return c
}

// versionOf is the version an npm spec pins, or "latest" when it pins none.
func versionOf(spec string) string {
	if _, v := splitPackage(KindNPX, spec); v != "" {
		return v
	}
	return "latest"
}

// npmFailure is how npm failed when its lines say nothing CheckNPM knows: its last stderr line,
// else the exit error.
func npmFailure(err error, stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return last
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.String()
	}
	return err.Error()
}

// limited keeps the first 64 KiB written to it and drops the rest (npm's answers are short).
type limited struct{ b *bytes.Buffer }

func (l *limited) Write(p []byte) (int, error) {
	if room := 64<<10 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// checkParallel bounds the npm questions CheckStatuses asks at once.
const checkParallel = 8

// CheckStatuses asks npm (CheckNPM, each bounded by timeout, several at once) about the package
// of every status in list that would run through npx, and records the answer in its NPM field.
// A version or package npm does not serve makes the status not runnable, with npm's answer as
// the reason. Without npm on PATH every answer is NPMUnknown.
func CheckStatuses(ctx context.Context, list []Status, lookPath func(string) (string, error), timeout time.Duration) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	npmPath, npmErr := lookPath("npm")
	var wg sync.WaitGroup
	sem := make(chan struct{}, checkParallel)
	for i := range list {
		s := &list[i]
		if s.Kind != KindNPX || !s.CanRun || s.Package == "" {
			continue
		}
		if npmErr != nil {
			s.NPM = &NPMCheck{Package: s.Package, Served: NPMUnknown, Detail: "npm not found on PATH"}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c := CheckNPM(ctx, npmPath, s.Package, timeout)
			s.NPM = &c
			if c.problem != nil {
				s.CanRun, s.Reason = false, c.problem.Refusal()
				if c.Served == NPMNoPackage {
					s.Install = PackageHint(c.problem.Package)
				}
			}
		}()
	}
	wg.Wait()
}
