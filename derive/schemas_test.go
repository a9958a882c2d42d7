package derive

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/internal/recordtest"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestSchemaChoice: a v1 record is read against the newer v1 (>= 1.25.0) unless a set is
// named, and the result names the set it was read against; 1.21.0 stays selectable, v2 is
// chosen when protocol 2 was negotiated.
func TestSchemaChoice(t *testing.T) {
	const session = `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%d}}
< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":%d,"agentInfo":{"name":"a","version":"1"}}}
! done`
	for _, c := range []struct {
		name            string
		protocol        int
		want            string
		noticeIsStable  bool
		wantVersionPart string
	}{
		{"", 1, schema.V1Next, true, "1.25.0"},
		{schema.V1, 1, schema.V1, false, "1.21.0"},
		{"", 2, schema.V2, false, "2.0.0-alpha.3"},
	} {
		frames := recordtest.Frames(t, fmt.Sprintf(session, c.protocol, c.protocol))
		f, err := Run(context.Background(), record.Split(frames), Options{Schema: c.name})
		if err != nil {
			t.Fatal(err)
		}
		got := f.Result.ACPSchema
		if got == nil || got.Name != c.want || !strings.Contains(got.Version, c.wantVersionPart) {
			t.Errorf("--schema %q, protocol %d: acpSchema = %+v, want %s (%s)", c.name, c.protocol, got, c.want, c.wantVersionPart)
		}
		if f.Schemas.Set.Has("Notice") != c.noticeIsStable {
			t.Errorf("--schema %q: the chosen set %s has Notice = %v", c.name, f.Schemas.Set.Name, !c.noticeIsStable)
		}
	}
}

// TestNewerUnstableMethods: the methods of the newer unstable drafts are typed by them when
// the newer stable set is chosen, and session/stop is a known (legacy) method.
func TestNewerUnstableMethods(t *testing.T) {
	s, err := loadSchemas("", &report.Result{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{acp.MethodSessionStatus, acp.MethodSessionArchive, acp.MethodSessionUnarchive, acp.MethodSessionSetTitle, acp.MethodAuthStatus, "providers/list"} {
		set, def := s.TypeFor(m, schema.HandledByAgent, schema.Params)
		if set == nil || set.Name != schema.V1NextUnstable || def == "" {
			t.Errorf("%s is typed by %v %q, want a type of %s", m, set, def, schema.V1NextUnstable)
		}
	}
	// A method the newer drafts dropped is still typed, by the 1.21 drafts.
	if set, def := s.TypeFor("nes/start", schema.HandledByAgent, schema.Params); set == nil || set.Name != schema.V1Unstable || def == "" {
		t.Errorf("nes/start is typed by %v %q, want a type of %s", set, def, schema.V1Unstable)
	}
	for _, m := range []string{acp.MethodSessionStop, acp.MethodSetModel, acp.MethodSessionStatus} {
		if !s.KnownMethod(m) {
			t.Errorf("%s is not a known method", m)
		}
	}
	if s.KnownMethod("session/halt") {
		t.Error("session/halt is no method of any set")
	}
}
