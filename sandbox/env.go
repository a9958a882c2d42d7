package sandbox

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/record"
)

// envJSON is the data behind the agent's environment: the allow-list with its reasons, the
// patterns of credential-looking names, and the agents' own home variables with their sources.
//
//go:embed env.json
var envJSON []byte

// envTable is env.json decoded.
type envTable struct {
	Allow []struct {
		Name   string `json:"name"`
		Prefix string `json:"prefix"`
		Why    string `json:"why"`
	} `json:"allow"`
	CredentialPatterns []string      `json:"credentialPatterns"`
	Agents             []AgentPlaces `json:"agents"`

	credential []*regexp.Regexp
}

// AgentPlaces is what one agent keeps where: the home variables the sandbox sets for it
// (values are paths, "~" being the sandbox HOME and $XDG_… the sandbox's XDG directories), the
// directories that must exist before it starts, and the places it writes under a real HOME.
type AgentPlaces struct {
	Agent    string            `json:"agent"`
	Env      map[string]string `json:"env"`
	Create   []string          `json:"create"`
	RealHome []string          `json:"realHome"`
	Source   string            `json:"source"`
}

// table is env.json, decoded on first use: commands that never look at an environment (the
// reference agent among them) do not pay for it at start-up.
var table = sync.OnceValue(mustTable)

func mustTable() *envTable {
	t := &envTable{}
	if err := json.Unmarshal(envJSON, t); err != nil {
		panic("sandbox: env.json: " + err.Error())
	}
	for _, p := range t.CredentialPatterns {
		t.credential = append(t.credential, regexp.MustCompile(p))
	}
	return t
}

// Agents returns the agents' places (env.json), for documentation and for callers that want
// to know which home variables the sandbox sets.
func Agents() []AgentPlaces { return append([]AgentPlaces(nil), table().Agents...) }

// LooksLikeCredential reports whether an environment variable name looks like it holds a
// credential (API keys, tokens, secrets, passwords, auth sockets, proxies that may carry a
// password…; env.json "credentialPatterns").
func LooksLikeCredential(name string) bool {
	for _, re := range table().credential {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// allowed reports whether the allow-list passes name through.
func allowed(name string) bool {
	for _, a := range table().Allow {
		if (a.Name != "" && a.Name == name) || (a.Prefix != "" && strings.HasPrefix(name, a.Prefix)) {
			return true
		}
	}
	return false
}

// expand turns a path expression of env.json ("~", "~/x", "$VAR/x") into a path. vars gives
// the values of $VAR; a variable without a value makes the expression empty.
func expand(expr, home string, vars func(string) string) string {
	switch {
	case expr == "~":
		return home
	case strings.HasPrefix(expr, "~/"):
		return filepath.Join(home, expr[2:])
	case strings.HasPrefix(expr, "$"):
		name, rest, _ := strings.Cut(expr[1:], "/")
		v := vars(name)
		if v == "" {
			return ""
		}
		return filepath.Join(v, rest)
	}
	return ""
}

// xdgDefault is where each XDG base directory is when its variable is unset.
var xdgDefault = map[string]string{
	"XDG_CONFIG_HOME": ".config",
	"XDG_DATA_HOME":   ".local/share",
	"XDG_STATE_HOME":  ".local/state",
	"XDG_CACHE_HOME":  ".cache",
}

// reserved reports whether the sandbox sets name itself, so the caller may not.
func reserved(name string) bool {
	switch name {
	case "HOME", "TMPDIR", "PWD", "BROWSER", "XDG_RUNTIME_DIR":
		return true
	}
	if _, ok := xdgDefault[name]; ok {
		return true
	}
	for _, a := range table().Agents {
		if _, ok := a.Env[name]; ok {
			return true
		}
	}
	return false
}

// buildEnv makes the agent's complete environment from the caller's (host), the variables the
// sandbox sets (own; PATH gets shimDir in front), and the caller's explicit pass-throughs and
// additions. It returns the environment, sorted, and the report of what happened to host.
func buildEnv(host []string, own map[string]string, shimDir string, pass []string, set []string) ([]string, record.EnvReport, error) {
	hostVars := map[string]string{}
	for _, kv := range host {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			hostVars[k] = v // the last one wins, as in os/exec
		}
	}
	out := map[string]string{}
	var rep record.EnvReport
	for k, v := range hostVars {
		if allowed(k) {
			out[k] = v
		}
	}
	for _, name := range pass {
		if reserved(name) {
			return nil, rep, fmt.Errorf("--pass-env %s: the sandbox sets %s itself", name, name)
		}
		if v, ok := hostVars[name]; ok {
			out[name] = v
			rep.Passed = append(rep.Passed, name)
		}
	}
	for _, kv := range set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, rep, fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
		if reserved(k) {
			return nil, rep, fmt.Errorf("--env %s: the sandbox sets %s itself", k, k)
		}
		out[k] = v
		rep.Set = append(rep.Set, k)
	}
	path := out["PATH"]
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	out["PATH"] = shimDir + string(filepath.ListSeparator) + path
	for k, v := range own {
		out[k] = v
	}
	for k, v := range hostVars {
		if got, ok := out[k]; ok && got == v {
			continue
		}
		if k == "PATH" && out["PATH"] == shimDir+string(filepath.ListSeparator)+v {
			continue // passed, with the shims in front
		}
		rep.Dropped = append(rep.Dropped, k)
		if LooksLikeCredential(k) {
			rep.DroppedCredentials = append(rep.DroppedCredentials, k)
		}
	}
	env := make([]string, 0, len(out))
	for k, v := range out {
		env = append(env, k+"="+v)
		if LooksLikeCredential(k) {
			rep.Credentials = append(rep.Credentials, k)
		}
	}
	for _, l := range [][]string{env, rep.Dropped, rep.DroppedCredentials, rep.Passed, rep.Set, rep.Credentials} {
		sort.Strings(l)
	}
	rep.Dropped = nonNil(rep.Dropped)
	rep.DroppedCredentials = nonNil(rep.DroppedCredentials)
	rep.Passed = nonNil(rep.Passed)
	rep.Set = nonNil(rep.Set)
	rep.Credentials = nonNil(rep.Credentials)
	return env, rep, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
