package render

import (
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// maxListed is how many files, launches, processes, lookups or destinations a report lists; it
// says how many more there were (the JSON has them all).
const maxListed = 10

// effectsKVs says what a run did to the machine, one fact a line (key, value), for the text
// report and the HTML card: the isolation in force, the environment it got, the files, the
// browser launches, the processes at each step of the teardown, the network.
func effectsKVs(r *report.Result) []htmlKV {
	se := r.SideEffects
	var kvs []htmlKV
	add := func(k, v string) { kvs = append(kvs, htmlKV{k, v}) }
	iso := se.Isolation
	level := string(iso.Level)
	if iso.Requested != "" && iso.Requested != iso.Level {
		level += " (" + string(iso.Requested) + " was asked for)"
	}
	add("isolation", level)
	if iso.Note != "" {
		add("", iso.Note)
	}
	if iso.Kept != "" {
		add("sandbox kept", iso.Kept)
	}
	if e := iso.Env; e != nil {
		s := fmt.Sprintf("%d of your variables dropped", len(e.Dropped))
		if len(e.DroppedCredentials) > 0 {
			s += fmt.Sprintf(", credentials among them: %s", foldList(e.DroppedCredentials, listMax, ", "))
		}
		if len(e.Passed) > 0 {
			s += "; passed on purpose: " + foldList(e.Passed, listMax, ", ")
		}
		if len(e.Set) > 0 {
			s += "; set on purpose: " + foldList(e.Set, listMax, ", ")
		}
		add("environment", s)
	}
	if len(iso.Credentials) > 0 {
		add("credential variables", foldList(iso.Credentials, listMax, ", ")+" (names only)")
	}
	kvs = append(kvs, filesKVs(r)...)
	kvs = append(kvs, browserKVs(se.Browser)...)
	kvs = append(kvs, processKVs(se.Processes)...)
	n := se.Network
	net := n.Note
	if n.Observed {
		net = fmt.Sprintf("%d lookups, %d destinations; %s", len(n.Lookups), len(n.Connects), n.Note)
	}
	add("network", net)
	for i, name := range n.Lookups {
		if i == maxListed {
			add("", fmt.Sprintf("… and %d more lookups", len(n.Lookups)-maxListed))
			break
		}
		add("", "looked up "+name)
	}
	for i, c := range n.Connects {
		if i == maxListed {
			add("", fmt.Sprintf("… and %d more destinations", len(n.Connects)-maxListed))
			break
		}
		add("", fmt.Sprintf("connected to %s port %d (%d×)", c.Host, c.Port, c.Count))
	}
	return kvs
}

// filesKVs says what became of the files: the counts and where they were looked for (the
// places agents keep their state under the user's HOME, when not isolated, only counted: they
// are the same places in every report), then the first changes. Nothing when the agent never
// started (a spawn failure) and nothing changed.
func filesKVs(r *report.Result) []htmlKV {
	se := r.SideEffects
	f := se.Files
	if f == nil {
		return []htmlKV{{"files", "not looked at"}}
	}
	if r.Error != nil && r.Error.Code == report.ErrSpawnFailed && f.Created+f.Changed+f.Deleted == 0 {
		return nil
	}
	counts := fmt.Sprintf("%d created, %d changed, %d deleted", f.Created, f.Changed, f.Deleted)
	var s string
	switch {
	case len(f.Watched) == 0:
		s = counts + " (nothing watched)"
	case se.Isolation.Level == record.LevelNone:
		s = fmt.Sprintf("%s, in %d places agents keep state under your HOME (see --json)", counts, len(f.Watched))
	default:
		s = counts + ", in " + foldList(f.Watched, listMax, ", ")
	}
	if f.Capped {
		s += fmt.Sprintf("; the inventory stopped at %d entries: changes beyond were not seen", f.Walked)
	}
	kvs := []htmlKV{{"files", s}}
	for i, c := range f.Changes {
		if i == maxListed {
			kvs = append(kvs, htmlKV{"", fmt.Sprintf("… and %d more", f.Created+f.Changed+f.Deleted-maxListed)})
			break
		}
		line := fmt.Sprintf("%s %s (%s, %d bytes)", c.Change, c.Path, c.Kind, c.Size)
		if c.Target != "" {
			line += " → " + c.Target
		}
		kvs = append(kvs, htmlKV{"", line})
	}
	return kvs
}

func browserKVs(b report.BrowserEffects) []htmlKV {
	if !b.Shimmed {
		return []htmlKV{{"browser", "not observed (no shims on the agent's PATH)"}}
	}
	n := len(b.Launches) + b.Dropped
	s := "no launch"
	if n > 0 {
		s = fmt.Sprintf("%d launch(es), %d before any authenticate; the shims opened nothing", n, b.BeforeAuthenticate)
	}
	kvs := []htmlKV{{"browser", s}}
	for i, l := range b.Launches {
		if i == maxListed {
			kvs = append(kvs, htmlKV{"", fmt.Sprintf("… and %d more", n-maxListed)})
			break
		}
		what := l.URL
		if what == "" {
			what = fmt.Sprintf("(%d argument(s), no URL)", l.Args)
		}
		kvs = append(kvs, htmlKV{"", fmt.Sprintf("%s %s at %.0f ms", l.Program, what, l.AtMs)})
	}
	return kvs
}

func processKVs(p report.ProcessEffects) []htmlKV {
	moment := func(m *report.ProcessMoment, absent string) string {
		switch {
		case m == nil:
			return absent
		case m.Error != "":
			return "not looked at: " + m.Error
		case len(m.Processes) == 0:
			return "none"
		}
		var names []string
		for i, proc := range m.Processes {
			if i == maxListed {
				names = append(names, fmt.Sprintf("… %d more", len(m.Processes)-maxListed))
				break
			}
			names = append(names, fmt.Sprintf("%s (%d)", proc.Comm, proc.PID))
		}
		return fmt.Sprintf("%d: %s", len(m.Processes), strings.Join(names, ", "))
	}
	after := "none survived the teardown"
	if n := len(p.AfterTeardown); n > 0 {
		var names []string
		for i, s := range p.AfterTeardown {
			if i == maxListed {
				names = append(names, fmt.Sprintf("… %d more", n-maxListed))
				break
			}
			name := fmt.Sprintf("%s (%d)", s.Command, s.PID)
			if s.LeftGroup {
				name += " outside the group"
			}
			names = append(names, name)
		}
		after = fmt.Sprintf("%d survived the teardown and were killed: %s", n, strings.Join(names, ", "))
	}
	kvs := []htmlKV{
		{"processes", after},
		{"", "after session/close: " + moment(p.AfterSessionClose, "not looked at (session/close not sent)")},
		{"", "after stdin EOF: " + moment(p.AfterStdinEOF, "not looked at (the agent was signalled as soon as its stdin closed)")},
	}
	if len(p.Escaped) > 0 {
		var names []string
		for _, e := range p.Escaped {
			names = append(names, fmt.Sprintf("%s (%d, seen %s)", e.Command, e.PID, e.Seen))
		}
		kvs = append(kvs, htmlKV{"", "left the agent's process group: " + strings.Join(names, ", ")})
	}
	return kvs
}

// sideEffectsText writes the Side effects section (nothing when the run did not observe
// them), and the auth oracle's section.
func sideEffectsText(t *textWriter, r *report.Result) {
	if r.SideEffects != nil {
		t.section("Side effects")
		for _, kv := range effectsKVs(r) {
			if kv.K == "" {
				t.hang("    "+kv.V, 6)
				continue
			}
			t.kv(kv.K, kv.V)
		}
	}
}

// authABText writes the auth oracle's section (--auth-ab).
func authABText(t *textWriter, r *report.Result) {
	ab := r.AuthAB
	if ab == nil {
		return
	}
	t.section("Authentication, your identity against an empty one (--auth-ab)")
	t.kv("status", string(ab.Status))
	for _, e := range ab.Evidence {
		t.kv("evidence", e)
	}
}

// effectsCell is the matrix's side-effects cell: the level, then what was done.
func effectsCell(r matrix.Row) string {
	return result(r, func(x *report.Result) string {
		se := x.SideEffects
		if se == nil {
			return None // a record that did not observe them
		}
		parts := []string{string(se.Isolation.Level)}
		if se.Files != nil {
			parts = append(parts, fmt.Sprintf("%d files", se.Files.Created+se.Files.Changed+se.Files.Deleted))
		}
		if n := len(se.Browser.Launches) + se.Browser.Dropped; n > 0 {
			parts = append(parts, fmt.Sprintf("%d browser", n))
		}
		if n := len(se.Processes.AfterTeardown); n > 0 {
			parts = append(parts, fmt.Sprintf("%d survived", n))
		}
		if n := len(se.Network.Lookups); n > 0 {
			parts = append(parts, fmt.Sprintf("%d lookups", n))
		}
		return strings.Join(parts, ", ")
	})
}
