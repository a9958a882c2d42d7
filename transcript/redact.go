package transcript

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// Redacted replaces every secret in a record.
const Redacted = "[redacted]"

// CredentialKeys are the `_meta` keys of the credential plane: their values are secrets
// wherever they appear (bare or namespaced, e.g. codebuddy.ai/accessToken).
var CredentialKeys = []string{"authSession", "accessToken", "refreshToken", "apiKey", "runtimeTransportCredential", "runtimeBindingToken", "password", "secret"}

// Redactor removes secrets from recorded bytes. The policy (docs/transcript.md, Redaction):
//   - values given explicitly (every --env value, secrets on the agent's command line), of 4
//     bytes or more;
//   - values of environment variables whose names look secret (SecretName), of 6 bytes or more;
//   - tokens of well-known shapes whatever their name: bearer tokens, sk-/pk-/rk- API keys,
//     GitHub (ghp_…, github_pat_…), AWS access key ids (AKIA…), Google API keys (AIza…), Slack
//     tokens (xox…-), and the password of a URL (scheme://user:PASSWORD@host);
//   - the value, of any JSON type, of a credential key (accessToken, authSession, … and the
//     catalogue's credential keys), bare or namespaced.
//
// JSON strings are judged decoded as well as raw: a secret spelled with \uXXXX escapes, or a
// credential key spelled so, is found and the string is re-encoded redacted.
type Redactor struct {
	secrets  [][]byte
	keys     *regexp.Regexp
	keyWords [][]byte       // the credential key names keys looks for
	keyName  *regexp.Regexp // a whole string that is a credential key name
}

var (
	bearer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`) })
	// tokens are secrets recognisable by their shape; every match holds one of tokenLiterals
	// (keep the two in step: FuzzRedactPrefilters checks it).
	tokens = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|xox[abposr]-[A-Za-z0-9-]{10,})`)
	})
	// urlPassword is the password of a URL's userinfo.
	urlPassword = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@"']*:)[^/\s@"']+@`)
	})
	// SecretName matches environment variable names whose values are secrets: *_API_KEY,
	// *_KEY, *_KEY_ID, *_TOKEN, *_PAT, anything with SECRET, PASSWORD, PASSWD, TOKEN or
	// CREDENTIAL in it.
	SecretName = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(SECRET|PASSWORD|PASSWD|TOKEN|CREDENTIAL|APIKEY)|(^|_)(API_KEY|KEY|KEY_ID|PAT)$`)
	})
)

// Minimum lengths of a redacted value: shorter ones ("1", "on") would redact ordinary text.
const (
	minGiven  = 4 // values given explicitly (--env)
	minSecret = 6 // values of secret-looking environment variables
)

// NewRedactor builds a redactor for the values given explicitly (--env values, command-line
// secrets) and for the values of every KEY=VALUE in environ whose key looks secret
// (SecretName). credentialKeys adds keys whose JSON values are always redacted
// (CredentialKeys are always included).
func NewRedactor(values []string, environ []string, credentialKeys []string) *Redactor {
	r := &Redactor{}
	add := func(v string, min int) {
		if len(v) < min {
			return
		}
		r.secrets = append(r.secrets, []byte(v))
		if q, _ := json.Marshal(v); string(q[1:len(q)-1]) != v {
			r.secrets = append(r.secrets, q[1:len(q)-1]) // as it appears inside a JSON string
		}
	}
	for _, v := range values {
		add(v, minGiven)
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && SecretName().MatchString(k) {
			add(v, minSecret)
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	keys := append(append([]string{}, CredentialKeys...), credentialKeys...)
	for i, k := range keys {
		r.keyWords = append(r.keyWords, []byte(k))
		keys[i] = regexp.QuoteMeta(k)
	}
	// "key": and "vendor.ns/key": — the value that follows is replaced whole.
	alt := strings.Join(keys, "|")
	r.keys = regexp.MustCompile(`"(?:[^"\\/]*/)?(?:` + alt + `)"\s*:\s*`)
	r.keyName = regexp.MustCompile(`^(?:[^"\\/]*/)?(?:` + alt + `)$`)
	return r
}

// Bytes returns b with every secret replaced by [redacted].
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || len(b) == 0 {
		return b
	}
	out := r.text(b)
	if bytes.IndexByte(out, '\\') >= 0 {
		out = r.escapedStrings(out)
	}
	return r.credentialValues(out)
}

// text replaces the secrets visible in b as it is.
func (r *Redactor) text(b []byte) []byte {
	out := b
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			out = bytes.ReplaceAll(out, s, []byte(Redacted))
		}
	}
	// Each pattern runs only where its literal part occurs: the regexp engine costs about
	// 0.3 µs per byte on these patterns, and every frame of a session passes here.
	if mayHoldBearer(out) {
		out = bearer().ReplaceAll(out, []byte("${1}"+Redacted))
	}
	if mayHoldToken(out) {
		out = tokens().ReplaceAll(out, []byte(Redacted))
	}
	if bytes.Contains(out, []byte("://")) && bytes.IndexByte(out, '@') >= 0 {
		out = urlPassword().ReplaceAll(out, []byte("${1}"+Redacted+"@"))
	}
	return out
}

// mayHoldBearer reports whether b holds "bearer" in any case, which every match of bearer
// does (its letters have no case variants outside ASCII).
func mayHoldBearer(b []byte) bool {
	for i := 0; i+6 <= len(b); i++ {
		if b[i]|0x20 == 'b' && bytes.EqualFold(b[i:i+6], []byte("bearer")) {
			return true
		}
	}
	return false
}

// tokenLiterals are the literal beginnings of tokens' alternatives (sk-, pk- and rk- share "k-").
var tokenLiterals = [][]byte{[]byte("k-"), []byte("gh"), []byte("github_pat_"), []byte("AKIA"), []byte("AIza"), []byte("xox")}

// mayHoldToken reports whether b holds one of tokenLiterals, which every match of tokens does.
func mayHoldToken(b []byte) bool {
	return slices.ContainsFunc(tokenLiterals, func(lit []byte) bool { return bytes.Contains(b, lit) })
}

// escapedStrings judges each JSON string written with escapes by what it decodes to: a
// string that decodes to a secret is re-encoded redacted, and one that decodes to a credential
// key name is re-encoded plainly so that its value is found. Other bytes stay as they are.
func (r *Redactor) escapedStrings(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, escaped := stringEnd(b, i)
		if end < 0 {
			break
		}
		if escaped {
			var s string
			if json.Unmarshal(b[i:end+1], &s) == nil {
				red := r.text([]byte(s))
				if !bytes.Equal(red, []byte(s)) || r.keyName.MatchString(s) {
					enc, _ := marshalString(string(red))
					out = append(append(out, b[last:i]...), enc...)
					last = end + 1
				}
			}
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// stringEnd finds the closing quote of the JSON string that starts at b[start], and whether
// the string has escapes; end is -1 when the string does not end.
func stringEnd(b []byte, start int) (end int, escaped bool) {
	for j := start + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped
		}
	}
	return -1, escaped
}

// marshalString encodes s as a JSON string without HTML escaping.
func marshalString(s string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// credentialValues replaces the JSON value after each credential key — a string, an object,
// anything — by "[redacted]", leaving every other byte as it was.
func (r *Redactor) credentialValues(b []byte) []byte {
	if !slices.ContainsFunc(r.keyWords, func(k []byte) bool { return bytes.Contains(b, k) }) {
		return b // every match of keys holds one of them
	}
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
var secretFlag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^--?[a-z0-9-]*(api[-_]?key|token|secret|password|credential)[a-z0-9-]*$`)
})

// SecretArgs finds secrets given on a command line: values of NAME=VALUE words whose name
// looks secret (env GEMINI_API_KEY=… agent), and of flags such as --api-key=V or --token V.
func SecretArgs(argv []string) []string {
	var out []string
	for i, a := range argv {
		if name, value, ok := strings.Cut(a, "="); ok {
			if SecretName().MatchString(strings.TrimLeft(name, "-")) || secretFlag().MatchString(name) {
				out = append(out, value)
			}
			continue
		}
		if secretFlag().MatchString(a) && i+1 < len(argv) {
			out = append(out, argv[i+1])
		}
	}
	return out
}
