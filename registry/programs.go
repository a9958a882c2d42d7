package registry

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/internal/safeio"
)

// packagePrograms are the executables of npm packages whose program is not named after the
// package (its last path element): the "bin" of their package.json, read on the versions
// noted. A package absent here is taken to install a program of its own name
// (@agentclientprotocol/claude-agent-acp: claude-agent-acp).
var packagePrograms = map[string][]string{
	"@google/gemini-cli":         {"gemini"},           // 0.27.x … 0.61.0
	"@qwen-code/qwen-code":       {"qwen"},             // 0.9.x … 0.24.4
	"opencode-ai":                {"opencode"},         // 1.18.33
	"@tencent-ai/codebuddy-code": {"codebuddy", "cbc"}, // 2.117.0, inside @tencent-ai/agent-sdk 0.3.201
}

// PackageName is the name of a package as an npx or uvx distribution writes it, without its
// version: "@google/gemini-cli@0.27.3" is "@google/gemini-cli"; for PyPI, "name==1.2.3",
// "name@1.2.3" and "name[extra]>=1" are "name".
func PackageName(k Kind, spec string) string {
	name, _ := splitPackage(k, spec)
	return name
}

// splitPackage splits a package spec into its name and the version (or range, or tag) it
// pins; the version is "" when the spec has none.
func splitPackage(k Kind, spec string) (name, version string) {
	if k == KindUVX {
		i := strings.IndexAny(spec, "=<>!~@[; ")
		if i < 0 {
			return spec, ""
		}
		return spec[:i], strings.TrimLeft(spec[i:], "=<>!~@ ")
	}
	// npm: a scope starts with @, so the version's @ is the last one after the first byte.
	at := strings.LastIndex(spec, "@")
	if at <= 0 {
		return spec, ""
	}
	return spec[:at], spec[at+1:]
}

// Programs returns the programs the entry's npx or uvx packages install, in the order Resolve
// looks for them on PATH: the distribution's cmd when it names one, else the package's
// programs (packagePrograms, or the last element of the package's name).
func (e Entry) Programs() []string {
	var out []string
	for _, k := range []Kind{KindNPX, KindUVX} {
		pkg := e.pkg(k)
		if pkg == nil {
			continue
		}
		for _, p := range pkg.programs(k) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// pkg is the entry's package distribution of kind k (npx or uvx), nil when it has none.
func (e Entry) pkg(k Kind) *Package {
	switch {
	case e.Command != nil:
		return nil
	case k == KindNPX:
		return e.Distribution.NPX
	case k == KindUVX:
		return e.Distribution.UVX
	}
	return nil
}

// programs are the executables of the package p, distributed as kind k.
func (p *Package) programs(k Kind) []string {
	if p.Cmd != "" {
		return []string{commandBase(p.Cmd)}
	}
	name := PackageName(k, p.Package)
	if k == KindNPX {
		if bins, ok := packagePrograms[name]; ok {
			return bins
		}
	}
	if base := path.Base(name); base != "" && base != "." && base != "/" {
		return []string{base}
	}
	return nil
}

// onPath is the launch of a program of the entry's package of kind k (npx or uvx) that is
// already on PATH: it runs instead of the package runner, with the distribution's arguments
// and environment, and nothing is fetched. ok is false when none of its programs is on PATH.
func (e Entry) onPath(k Kind, env Env) (l Launch, ok bool) {
	pkg := e.pkg(k)
	if pkg == nil {
		return Launch{}, false
	}
	for _, prog := range pkg.programs(k) {
		p, err := env.LookPath(prog)
		if err != nil {
			continue
		}
		runner := "npx"
		if k == KindUVX {
			runner = "uvx"
		}
		return Launch{ID: e.ID, Kind: KindPath, Source: e.Source, Argv: append([]string{prog}, pkg.Args...), Path: p,
			Env: cloneEnv(pkg.Env), Package: pkg.Package, Replaces: packageArgv(runner, pkg), Installed: installedPackage(p, prog)}, true
	}
	return Launch{}, false
}

// maxPackageJSON bounds a package.json read by installedPackage.
const maxPackageJSON = 1 << 20

// installedPackage says which npm package and version the program at path belongs to
// ("@google/gemini-cli 0.61.0"): npm links bin/NAME to a script inside its package, so from
// the file the link resolves to, the first package.json up the tree whose "bin" names
// program. "" when there is none (not an npm install, or a wrapper script).
func installedPackage(p, program string) string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(real)
	for range 8 {
		if b, err := safeio.ReadFile(filepath.Join(dir, "package.json"), maxPackageJSON); err == nil {
			var pj struct {
				Name    string          `json:"name"`
				Version string          `json:"version"`
				Bin     json.RawMessage `json:"bin"`
			}
			if json.Unmarshal(b, &pj) == nil && pj.Name != "" && binNames(pj.Name, pj.Bin, program) {
				return strings.TrimSpace(fmt.Sprintf("%s %s", pj.Name, pj.Version))
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

// binNames says whether a package.json "bin" (an object of names, or one path, which npm
// names after the package) installs program.
func binNames(pkg string, bin json.RawMessage, program string) bool {
	var one string
	if json.Unmarshal(bin, &one) == nil {
		return path.Base(pkg) == program
	}
	var many map[string]string
	if json.Unmarshal(bin, &many) == nil {
		_, ok := many[program]
		return ok
	}
	return false
}

// Resolution says, for a launch of a program on PATH (KindPath), what it runs instead of the
// registry's own command: `resolved to gemini on PATH (/usr/bin/gemini: @google/gemini-cli
// 0.61.0) instead of npx -y @google/gemini-cli@0.27.3 --experimental-acp`. "" for every other
// launch.
func (l Launch) Resolution() string {
	if l.Kind != KindPath || len(l.Argv) == 0 {
		return ""
	}
	where := l.Path
	if l.Installed != "" {
		where += ": " + l.Installed
	} else {
		where += ", version unknown until it answers initialize"
	}
	return fmt.Sprintf("resolved to %s on PATH (%s) instead of %s", l.Argv[0], where, quoteArgv(l.Replaces))
}

// quoteArgv renders argv as a shell-like line (see Launch.String).
func quoteArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = shellQuote(a)
	}
	return strings.Join(parts, " ")
}
