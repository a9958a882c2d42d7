package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/report"
)

// clientText is the Client section: the profile probed as, what it declared, and what
// acpprobe answers instead of serving it.
func clientText(t *textWriter, c *report.Client) {
	if c == nil {
		return
	}
	t.section("Client")
	profile := c.Profile
	if c.File != "" {
		profile += " (" + c.File + ")"
	}
	t.kv("profile", profile)
	declared := "(nothing)"
	if len(c.Declared) > 0 {
		declared = strings.Join(c.Declared, ", ")
	}
	t.kv("declares", declared)
	for _, a := range c.Answers {
		t.kv(a.Capability, a.Answer)
	}
}

// requirementsText is the Requirements section: each requirement's verdict and evidence, and
// the checklist's.
func requirementsText(t *textWriter, c *report.Checklist) {
	if c == nil {
		return
	}
	t.section("Requirements")
	for _, q := range c.Requirements {
		t.kv(q.Name, fmt.Sprintf("%s: %s", q.Verdict, q.Evidence))
	}
	t.kv("checklist", string(c.Verdict))
}

// matrixSurfacesText writes, after the matrix, what differs between the client profiles of
// each agent probed as several (matrix --client-profiles).
func matrixSurfacesText(w io.Writer, surfaces []matrix.Surface) error {
	t := &textWriter{w: w, width: screenOf(w).lineWidth()}
	for _, s := range surfaces {
		t.section(fmt.Sprintf("%s: differences by client (%s): %d", s.Agent, strings.Join(s.Profiles, ", "), len(s.Differences)))
		differencesText(t, s.Differences)
	}
	return t.err
}

// differencesText writes one line per difference.
func differencesText(t *textWriter, diffs []report.Difference) {
	if len(diffs) == 0 {
		t.line("every profile was shown the same")
	}
	for _, d := range diffs {
		t.line(fmt.Sprintf("%-13s %s — shown to %s; not to %s", d.Kind, d.Item, strings.Join(d.In, ", "), strings.Join(d.NotIn, ", ")))
	}
}

// Surface writes the surface by client (probe --client-profile A,B,…): a line per profile
// (the agent, how session/new ended), then one line per difference, grouped by kind, with the
// profiles shown it and those not.
func Surface(w io.Writer, s *report.Surface) error {
	t := &textWriter{w: w, width: screenOf(w).lineWidth()}
	t.hang("Profiles", 2)
	for _, run := range s.Profiles {
		r := run.Result
		agent := "(not probed)"
		if r.AgentInfo != nil {
			agent = strings.TrimSpace(r.AgentInfo.Name + " " + r.AgentInfo.Version)
		}
		outcome := "session/new ok"
		if r.Error != nil {
			outcome = string(r.Error.Code)
		}
		t.kv(run.Profile, fmt.Sprintf("%s; %d auth methods; %s", agent, len(r.AuthMethods), outcome))
	}
	t.section(fmt.Sprintf("Differences (%d)", len(s.Differences)))
	differencesText(t, s.Differences)
	requirementsText(t, s.Requirements)
	return t.err
}
