package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acpprobe/acpprobe/internal/schematable"
	"github.com/acpprobe/acpprobe/internal/schematable/schematest"
)

// The oracle: github.com/santhosh-tekuri/jsonschema/v6, which validated messages at run time
// before the tables, compiles the same pinned documents (schematest). The generated validator
// must give the same verdict and the same leaf violations for every instance.

var oracles sync.Map // set name -> *schematest.Oracle

func oracleFor(t testing.TB, s *Set) *schematest.Oracle {
	if o, ok := oracles.Load(s.Name); ok {
		return o.(*schematest.Oracle)
	}
	raw, err := os.ReadFile(s.s.file)
	if err != nil {
		t.Fatal(err)
	}
	o, err := schematest.New(schematable.Doc{Name: filepath.Base(s.s.file), Raw: raw})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := oracles.LoadOrStore(s.Name, o)
	return got.(*schematest.Oracle)
}

// agree compares the validator with the oracle on one instance; it returns whether the
// instance was valid.
func agree(t testing.TB, s *Set, def string, instance []byte) bool {
	t.Helper()
	want, judged := oracleFor(t, s).Validate(t, "#/$defs/"+def, instance)
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
	for i := range want { // Validate names the set in the location
		want[i].Keyword = "acp:" + s.Name + want[i].Keyword
	}
	schematest.Agree(t, fmt.Sprintf("%s %s on %s", s.Name, def, instance), got, want)
	return len(got) == 0
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
	limit, judged := 8, sets // locations mutated per message; sets compared
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
				v, err := schematable.Decode(line)
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
					for _, mu := range schematest.Mutants(payload, limit) {
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
		for _, d := range s.s.table.Defs {
			if d.Name == "" {
				continue // the document's root is no type
			}
			for _, v := range values {
				agree(t, s, d.Name, []byte(v))
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
		def := s.s.table.Defs[1+int(defIndex)%(len(s.s.table.Defs)-1)].Name // [0] is the root
		if !json.Valid(instance) || schematest.HugeExponent(instance) {
			return
		}
		agree(t, s, def, instance)
	})
}
