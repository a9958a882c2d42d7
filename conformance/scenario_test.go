package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/internal/recordtest"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
)

// A scenario (testdata/scenarios/*.txtar) is a recorded session and the findings it must
// produce. Its comment says what it shows. Sections:
//
//	-- frames --     one frame per line:
//	                   > LINE            the client wrote LINE
//	                   < LINE            the agent wrote LINE
//	                   <q "GO STRING"    the agent wrote these bytes (strconv.Unquote)
//	                   <u LINE           the agent wrote LINE and its output ended without a newline
//	                   <o SIZE PREFIX    the agent wrote an oversize line of SIZE bytes
//	                   2 TEXT            the agent wrote TEXT on stderr
//	                   2* N TEXT         … N times
//	                   ! KIND [JSON]     an engine event (spawn is added when missing)
//	-- deep --       frames of the --deep connection (same syntax; its spawn event must name
//	                 the purpose "deep", or say initializeOnly as records before purposes did)
//	-- fork-probe -- frames of the fork-probe connection (same syntax; a spawn event with the
//	                 purpose "fork-probe" is added when missing)
//	-- turn --       frames of a turn scenario's fresh agent process (the same, purpose turn)
//	-- session-load --, -- session-resume -- frames of the sessions turn scenario's
//	                 connections (the same, with their purposes)
//
// The sections are one record, in this order, split by record.Split as Analyze splits it.
//
//	-- findings --   "ID SEQ" per expected finding (SEQ 0 when the finding has none), or "none"
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			facts, sections, _ := loadScenario(t, file)
			findings := Evaluate(context.Background(), facts).Findings
			var got []string
			for _, f := range findings {
				got = append(got, fmt.Sprintf("%s %d", f.ID, f.Seq))
				if _, ok := Lookup(f.ID); !ok || f.Tier == "" || f.Message == "" || f.SpecRef == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
			want := expectedFindings(sections["findings"])
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				var detail strings.Builder
				for _, f := range findings {
					fmt.Fprintf(&detail, "  %s %d %s: %s\n", f.ID, f.Seq, f.Pointer, f.Message)
				}
				t.Errorf("findings:\n got %q\nwant %q\n%s", got, want, detail.String())
			}
		})
	}
}

// loadScenario reads a scenario: the facts of its record (the sections in order, split by
// record.Split as Analyze splits it), its sections, and the record's connections.
func loadScenario(t *testing.T, file string) (*derive.Facts, map[string]string, record.Connections) {
	t.Helper()
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, f := range a.Files {
		sections[f.Name] = string(f.Data)
	}
	log := jsonrpc.NewLog()
	recordtest.Append(t, log, sections["frames"], recordtest.DefaultSpawn)
	extras := []struct {
		section string
		purpose record.Purpose
	}{{"deep", record.PurposeDeep}, {"fork-probe", record.PurposeForkProbe}, {"turn", record.PurposeTurn},
		{"session-load", record.PurposeSessionLoad}, {"session-resume", record.PurposeSessionResume}}
	for _, e := range extras {
		if section, ok := sections[e.section]; ok {
			recordtest.Append(t, log, section, fmt.Sprintf(`{"command":"scenario","argv":["scenario"],"cwd":"/w","protocolVersion":1,"requestTimeoutMs":1000,"startupTimeoutMs":1000,"purpose":%q,"initializeOnly":true}`, e.purpose))
		}
	}
	conns := record.Split(log.Frames())
	for _, e := range extras {
		if _, ok := sections[e.section]; ok && conns.Of(e.purpose) == nil {
			t.Fatalf("the %s section is not a connection of its own: its spawn event must name its purpose", e.section)
		}
	}
	return factsOf(t, conns, derive.Options{}), sections, conns
}

// factsOf derives the facts of a record's connections, as Analyze does.
func factsOf(t *testing.T, conns record.Connections, o derive.Options) *derive.Facts {
	t.Helper()
	f, err := derive.Run(context.Background(), conns, o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// evaluate judges a record's frames, as Analyze does.
func evaluate(t *testing.T, frames []jsonrpc.Frame) Outcome {
	t.Helper()
	return Evaluate(context.Background(), factsOf(t, record.Split(frames), derive.Options{}))
}

func expectedFindings(section string) []string {
	var want []string
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line == "none" || strings.HasPrefix(line, "#") {
			continue
		}
		want = append(want, line)
	}
	sort.Strings(want)
	return want
}

// TestEveryCheckHasAFailingScenario keeps the catalogue and the scenarios together: each check
// must fire in at least one scenario, and clean.txtar (no findings at all) is the passing case
// of all of them.
func TestEveryCheckHasAFailingScenario(t *testing.T) {
	files, _ := filepath.Glob("testdata/scenarios/*.txtar")
	fired := map[string]bool{}
	for _, file := range files {
		a, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if f.Name != "findings" {
				continue
			}
			for _, line := range expectedFindings(string(f.Data)) {
				id, _, _ := strings.Cut(line, " ")
				fired[id] = true
			}
		}
	}
	for _, c := range Checks() {
		if !fired[c.ID] {
			t.Errorf("check %s has no scenario where it fires", c.ID)
		}
	}
	if _, err := os.Stat("testdata/scenarios/clean.txtar"); err != nil {
		t.Error("clean.txtar (the passing case of every check) is missing")
	}
}

// asTap returns a copy of a record's frames whose spawn event says the record is a tap's.
func asTap(t *testing.T, frames []jsonrpc.Frame) []jsonrpc.Frame {
	t.Helper()
	frames = slices.Clone(frames)
	for i, f := range frames {
		if s, ok := record.Spawn.Decode(f); ok {
			s.Tap = true
			frames[i].Raw, _ = json.Marshal(s)
			return frames
		}
	}
	t.Fatal("the record has no spawn event")
	return nil
}
