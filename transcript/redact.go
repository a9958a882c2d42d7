package transcript

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// Redacted replaces every secret in a record.
const Redacted = "[redacted]"

// CredentialKeys are the `_meta` keys of the credential plane: their values are secrets
// wherever they appear (bare or namespaced, e.g. codebuddy.ai/accessToken).
var CredentialKeys = []string{"authSession", "accessToken", "refreshToken", "apiKey", "runtimeTransportCredential", "runtimeBindingToken", "password", "secret"}

// Redactor removes secrets from recorded bytes: given values (from --env, and from
// environment variables whose names look secret), bearer tokens, sk-… style API keys, and the
// values of credential keys in JSON.
type Redactor struct {
	secrets [][]byte
	keys    *regexp.Regexp
}

var (
	bearer = regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`)
	apiKey = regexp.MustCompile(`\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}`)
	// secretName matches environment variable names whose values are secrets.
	secretName = regexp.MustCompile(`(?i)(_API_KEY|_TOKEN|SECRET|PASSWORD|_CREDENTIALS?)$|^(API_KEY|TOKEN)$|SECRET`)
)

// minSecret is the shortest value treated as a secret: shorter ones ("1", "on") would
// redact ordinary text.
const minSecret = 6

// NewRedactor builds a redactor for the values given explicitly (--env values) and for the
// values of every KEY=VALUE in environ whose key looks secret (*_API_KEY, *_TOKEN, *SECRET*…).
// credentialKeys adds keys whose JSON string values are always redacted (CredentialKeys are
// always included).
func NewRedactor(values []string, environ []string, credentialKeys []string) *Redactor {
	r := &Redactor{}
	add := func(v string) {
		if len(v) < minSecret {
			return
		}
		r.secrets = append(r.secrets, []byte(v))
		if q, _ := json.Marshal(v); string(q[1:len(q)-1]) != v {
			r.secrets = append(r.secrets, q[1:len(q)-1]) // as it appears inside a JSON string
		}
	}
	for _, v := range values {
		add(v)
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && secretName.MatchString(k) {
			add(v)
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	keys := append(append([]string{}, CredentialKeys...), credentialKeys...)
	for i, k := range keys {
		keys[i] = regexp.QuoteMeta(k)
	}
	// "key": and "vendor.ns/key": — the value that follows is replaced whole.
	r.keys = regexp.MustCompile(`"(?:[^"\\/]*/)?(?:` + strings.Join(keys, "|") + `)"\s*:\s*`)
	return r
}

// Bytes returns b with every secret replaced by [redacted].
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || len(b) == 0 {
		return b
	}
	out := b
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			out = bytes.ReplaceAll(out, s, []byte(Redacted))
		}
	}
	out = bearer.ReplaceAll(out, []byte("${1}"+Redacted))
	out = apiKey.ReplaceAll(out, []byte(Redacted))
	return r.credentialValues(out)
}

// credentialValues replaces the JSON value after each credential key — a string, an object,
// anything — by "[redacted]", leaving every other byte as it was.
func (r *Redactor) credentialValues(b []byte) []byte {
	locs := r.keys.FindAllIndex(b, -1)
	if locs == nil {
		return b
	}
	var out []byte
	last := 0
	for _, loc := range locs {
		start := loc[1]
		if start < last {
			continue // inside a value already replaced
		}
		n := jsonValueLen(b[start:])
		if n == 0 {
			continue
		}
		out = append(append(out, b[last:start]...), `"`+Redacted+`"`...)
		last = start + n
	}
	return append(out, b[last:]...)
}

// jsonValueLen is the length of the JSON value at the start of b (0 if there is none).
func jsonValueLen(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return 0
	}
	return int(dec.InputOffset())
}

// String redacts a string.
func (r *Redactor) String(s string) string { return string(r.Bytes([]byte(s))) }

// Strings redacts each string (an argv, say).
func (r *Redactor) Strings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.String(s)
	}
	return out
}

// Frame redacts a frame's bytes; a changed client or agent line is decoded again. It is meant
// for jsonrpc.Log.SetFilter, so that nothing downstream (results, transcripts, findings) ever
// holds a secret.
func (r *Redactor) Frame(f jsonrpc.Frame) jsonrpc.Frame {
	red := r.Bytes(f.Raw)
	if len(red) == len(f.Raw) && bytes.Equal(red, f.Raw) {
		return f
	}
	f.Raw = red
	f.Msg, f.DecodeErr = nil, nil
	if !f.Oversize {
		f.Size = int64(len(red))
		if f.Dir == jsonrpc.DirClient || f.Dir == jsonrpc.DirAgent {
			f.Msg, f.DecodeErr = jsonrpc.Decode(red)
		}
	}
	return f
}

// secretFlag matches command-line flags whose value is a secret (--api-key, --token, …).
var secretFlag = regexp.MustCompile(`(?i)^--?[a-z0-9-]*(api[-_]?key|token|secret|password|credential)[a-z0-9-]*$`)

// SecretArgs finds secrets given on a command line: values of NAME=VALUE words whose name
// looks secret (env GEMINI_API_KEY=… agent), and of flags such as --api-key=V or --token V.
func SecretArgs(argv []string) []string {
	var out []string
	for i, a := range argv {
		if name, value, ok := strings.Cut(a, "="); ok {
			if secretName.MatchString(strings.TrimLeft(name, "-")) || secretFlag.MatchString(name) {
				out = append(out, value)
			}
			continue
		}
		if secretFlag.MatchString(a) && i+1 < len(argv) {
			out = append(out, argv[i+1])
		}
	}
	return out
}
