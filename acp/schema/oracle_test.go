package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The oracle: github.com/santhosh-tekuri/jsonschema/v6, which validated messages at run time
// before the tables, compiles the same pinned documents. The generated validator must give
// the same verdict and the same leaf violations for every instance.

// oracle is one pinned set compiled by jsonschema/v6.
type oracle struct {
	mu       sync.Mutex
	c        *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

const oracleURL = "file:///acp/"

var oracles sync.Map // set name -> *oracle

func oracleFor(t testing.TB, s *Set) *oracle {
	if o, ok := oracles.Load(s.Name); ok {
		return o.(*oracle)
	}
	raw, err := os.ReadFile(s.t.file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(oracleURL+s.Name, doc); err != nil {
		t.Fatal(err)
	}
	o, _ := oracles.LoadOrStore(s.Name, &oracle{c: c, compiled: map[string]*jsonschema.Schema{}})
	return o.(*oracle)
}

// validate is what jsonschema/v6 says of instance as the type def: its leaf violations,
// sorted (it judges an object's members in map order), and whether it could judge at all.
func (o *oracle) validate(t testing.TB, setName, def string, instance []byte) ([]Violation, bool) {
	o.mu.Lock()
	sch, ok := o.compiled[def]
	if !ok {
		var err error
		sch, err = o.c.Compile(oracleURL + setName + "#/$defs/" + def)
		if err != nil {
			o.mu.Unlock()
			t.Fatalf("oracle: %s %s: %v", setName, def, err)
		}
		o.compiled[def] = sch
	}
	o.mu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return nil, false
	}
	verr := sch.Validate(inst)
	if verr == nil {
		return nil, true
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		t.Fatalf("oracle: %v", verr)
	}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{
				Pointer: pointer(e.InstanceLocation),
				Keyword: "acp:" + setName + strings.TrimPrefix(e.SchemaURL, oracleURL+setName),
				Message: e.ErrorKind.LocalizedString(printer),
			})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sortViolations(out)
	return out, true
}

func sortViolations(vs []Violation) {
	slices.SortFunc(vs, func(a, b Violation) int {
		return strings.Compare(a.Pointer+"\x00"+a.Keyword+"\x00"+a.Message, b.Pointer+"\x00"+b.Keyword+"\x00"+b.Message)
	})
}

// agree compares the validator with the oracle on one instance; it returns whether the
// instance was valid.
func agree(t testing.TB, s *Set, def string, instance []byte) bool {
	t.Helper()
	want, judged := oracleFor(t, s).validate(t, s.Name, def, instance)
	got, err := s.Validate(def, instance)
	if !judged {
		if err == nil {
			t.Fatalf("%s %s: the oracle cannot parse %q, Validate judged it", s.Name, def, instance)
		}
		return false
	}
	if err != nil {
		t.Fatalf("%s %s %s: %v", s.Name, def, instance, err)
	}
	sorted := slices.Clone(got)
	sortViolations(sorted)
	if !slices.Equal(sorted, want) {
		t.Fatalf("%s %s on %s:\n got %s\nwant %s", s.Name, def, instance, show(sorted), show(want))
	}
	return len(got) == 0
}

func show(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s | %s | %s", v.Pointer, v.Keyword, v.Message)
	}
	if b.Len() == 0 {
		return "(valid)"
	}
	return b.String()
}

// recorded are the lines of the recorded sessions in the repository (both directions: the
// client's messages are types of the schemas too) and of the conformance scenarios.
func recorded(t testing.TB) [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	add := func(line []byte) {
		if !seen[string(line)] && json.Valid(line) {
			seen[string(line)] = true
			out = append(out, line)
		}
	}
	files, _ := filepath.Glob("../../testdata/*/*.ndjson")
	if len(files) == 0 {
		t.Fatal("no recordings found in ../../testdata")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var fr struct{ Raw string }
			if json.Unmarshal(sc.Bytes(), &fr) == nil && fr.Raw != "" {
				add([]byte(fr.Raw))
			}
		}
	}
	scen, _ := filepath.Glob("../../conformance/testdata/scenarios/*.txtar")
	for _, f := range scen {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "< ") || strings.HasPrefix(line, "> ") {
				add([]byte(line[2:]))
			}
		}
	}
	return out
}

// messageDefs are the types that describe whole JSON-RPC messages: unions of every method's
// types, so one instance exercises every branch.
var messageDefs = []string{"AgentRequest", "AgentResponse", "AgentNotification", "ClientRequest", "ClientResponse", "ClientNotification"}

// payloadDef is the type of a message's params or result, by its method (for a response, by
// its result's likely shape, tried as the handshake answers).
func payloadDefs(s *Set, msg map[string]any) [][2]string {
	var out [][2]string
	method, _ := msg["method"].(string)
	for _, side := range []Side{HandledByAgent, HandledByClient} {
		for _, part := range []Part{Params, Notification} {
			if def, ok := s.TypeFor(method, side, part); ok && msg["params"] != nil {
				out = append(out, [2]string{"params", def})
			}
		}
	}
	if msg["result"] != nil {
		for _, def := range []string{"InitializeResponse", "NewSessionResponse", "PromptResponse"} {
			out = append(out, [2]string{"result", def})
		}
	}
	if msg["error"] != nil {
		out = append(out, [2]string{"error", "Error"})
	}
	return out
}

// mutants are variations of a JSON value: at every location (up to limit of them), the value
// replaced by each of a set of others, each object key dropped, and an unknown key added.
func mutants(v any, limit int) []any {
	repl := []any{nil, true, json.Number("1"), json.Number("1.5"), json.Number("-1"), json.Number("1e400"),
		json.Number("65536"), json.Number("2.0"), "", "x\u202e", "text", "tool_call", []any{}, []any{json.Number("1")}, map[string]any{}}
	var out []any
	var walk func(cur any, set func(any))
	n := 0
	walk = func(cur any, set func(any)) {
		if n >= limit {
			return
		}
		n++
		for _, r := range repl {
			set(r)
			out = append(out, clone(v))
		}
		set(cur)
		switch x := cur.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				val := x[k]
				delete(x, k)
				out = append(out, clone(v))
				x[k] = val
				walk(val, func(nv any) { x[k] = nv })
			}
			x["zzUnknown"] = json.Number("1")
			out = append(out, clone(v))
			delete(x, "zzUnknown")
		case []any:
			for i := range x {
				walk(x[i], func(nv any) { x[i] = nv })
			}
		}
	}
	walk(v, func(any) {})
	return out
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			m[k] = clone(val)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, val := range x {
			a[i] = clone(val)
		}
		return a
	}
	return v
}

func encode(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgreesWithJSONSchema: on the recorded messages and on mutants of them, in every set,
// as whole messages (the unions of every method) and as the payload types, the validator
// says what jsonschema/v6 says.
func TestAgreesWithJSONSchema(t *testing.T) {
	lines := recorded(t)
	for _, m := range benchMessages {
		lines = append(lines, m.body)
	}
	limit, judged := 16, sets // locations mutated per message; sets compared
	if testing.Short() || raceDetector {
		limit, judged = 4, sets[:1] // the race detector slows this tenfold: v1 only
	}
	for _, s := range judged {
		t.Run(s.Name, func(t *testing.T) {
			var valid, invalid int
			count := func(ok bool) {
				if ok {
					valid++
				} else {
					invalid++
				}
			}
			for _, line := range lines {
				v, err := decode(line)
				if err != nil {
					continue
				}
				msg, _ := v.(map[string]any)
				for _, def := range messageDefs {
					if s.Has(def) {
						count(agree(t, s, def, line))
					}
				}
				for _, pd := range payloadDefs(s, msg) {
					payload := msg[pd[0]]
					count(agree(t, s, pd[1], encode(t, payload)))
					for _, mu := range mutants(payload, limit) {
						count(agree(t, s, pd[1], encode(t, mu)))
					}
				}
			}
			t.Logf("%d valid, %d invalid instances agree", valid, invalid)
			if valid < 50 || invalid < 200 {
				t.Errorf("too few instances of each verdict: %d valid, %d invalid", valid, invalid)
			}
		})
	}
}

// TestEveryTypeAgreesOnBasicValues: every type of every set, on values of every JSON type.
func TestEveryTypeAgreesOnBasicValues(t *testing.T) {
	values := []string{`null`, `true`, `0`, `-1`, `1.5`, `"s"`, `[]`, `[{}]`, `{}`, `{"_meta":{}}`, `{"type":"text","text":"t"}`,
		`{"sessionUpdate":"plan","entries":[]}`, `{"sessionId":"s"}`, `{"outcome":{"outcome":"cancelled"}}`}
	for _, s := range sets {
		for _, d := range s.t.defs {
			for _, v := range values {
				agree(t, s, d.name, []byte(v))
			}
		}
	}
}

// FuzzAgreesWithJSONSchema: any bytes, as any type of any set.
func FuzzAgreesWithJSONSchema(f *testing.F) {
	for _, m := range benchMessages {
		f.Add([]byte(m.body), uint16(0), uint8(0))
	}
	f.Add([]byte(`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":1}}`), uint16(7), uint8(1))
	f.Add([]byte(`{"protocolVersion":1e2,"agentCapabilities":{"loadSession":null}}`), uint16(3), uint8(2))
	f.Fuzz(func(t *testing.T, instance []byte, defIndex uint16, setIndex uint8) {
		s := sets[int(setIndex)%len(sets)]
		def := s.t.defs[int(defIndex)%len(s.t.defs)].name
		if !json.Valid(instance) || hugeExponent(instance) {
			return
		}
		agree(t, s, def, instance)
	})
}

// hugeExponent reports an exponent jsonschema/v6 cannot handle in reasonable time (it turns
// numbers into big.Rat): the validator compares such numbers as text.
func hugeExponent(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != 'e' && b[i] != 'E' {
			continue
		}
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if n, err := strconv.Atoi(string(b[j:k])); k > j && (err != nil || n > 1000) {
			return true
		}
	}
	return false
}
