package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/probe"
)

// Column is one column of the capability matrix.
type Column struct {
	Key   string // stable key (HTML data attributes, JSON)
	Title string
	// Numeric columns sort by number.
	Numeric bool
	Value   func(matrix.Row) string
}

// Columns are the matrix columns, in order.
var Columns = []Column{
	{Key: "agent", Title: "Agent", Value: func(r matrix.Row) string { return r.ID }},
	{Key: "version", Title: "Version", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			if x.AgentInfo == nil {
				return "-"
			}
			return strings.TrimSpace(x.AgentInfo.Name + " " + x.AgentInfo.Version)
		})
	}},
	{Key: "protocol", Title: "Protocol", Numeric: true, Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			if x.ProtocolVersion == nil {
				return "-"
			}
			return fmt.Sprint(*x.ProtocolVersion)
		})
	}},
	{Key: "auth", Title: "Auth", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string { return string(x.Auth.Status) })
	}},
	{Key: "prompt", Title: "Prompt content", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			p := x.Capabilities.PromptCapabilities
			return list(flag("image", p.Image), flag("audio", p.Audio), flag("resource", p.EmbeddedContext))
		})
	}},
	{Key: "mcp", Title: "MCP", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			m := x.Capabilities.McpCapabilities
			return list("stdio", flag("http", m.HTTP), flag("sse", m.SSE), flag("acp", m.ACP))
		})
	}},
	{Key: "sessions", Title: "Session caps", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			s := x.Capabilities.SessionCapabilities
			return list(flag("load", x.Capabilities.LoadSession), flag("list", s.List), flag("resume", s.Resume), flag("close", s.Close),
				flag("fork", s.Fork), flag("delete", s.Delete), flag("dirs", s.AdditionalDirectories))
		})
	}},
	methodColumn("load", acp.MethodSessionLoad),
	methodColumn("resume", acp.MethodSessionResume),
	methodColumn("list", acp.MethodSessionList),
	methodColumn("close", acp.MethodSessionClose),
	methodColumn("fork", acp.MethodSessionFork),
	methodColumn("delete", acp.MethodSessionDelete),
	{Key: "modes", Title: "Modes", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			var ids []string
			for _, m := range x.Modes {
				ids = append(ids, m.ID)
			}
			return list(ids...)
		})
	}},
	{Key: "models", Title: "Models", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			var ids []string
			for _, m := range x.Models {
				ids = append(ids, m.ID)
			}
			return list(ids...)
		})
	}},
	{Key: "config", Title: "Config options", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			var ids []string
			for _, o := range x.ConfigOptions {
				ids = append(ids, o.ID)
			}
			return list(ids...)
		})
	}},
	{Key: "reasoning", Title: "Reasoning", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			if x.Reasoning == nil {
				return "-"
			}
			return list(x.Reasoning.Values...)
		})
	}},
	{Key: "findings", Title: "Findings M/C/A/I", Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			n := map[probe.Tier]int{}
			for _, f := range x.Findings {
				n[f.Tier]++
			}
			return fmt.Sprintf("%d/%d/%d/%d", n[probe.TierMandatory], n[probe.TierCapability], n[probe.TierAdvisory], n[probe.TierInfo])
		})
	}},
	{Key: "startup", Title: "Startup ms", Numeric: true, Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			if x.Timings.SpawnToInitializeMs == 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f", x.Timings.SpawnToInitializeMs)
		})
	}},
	{Key: "status", Title: "Status", Value: Status},
}

// Status says in a few words how the probe of a row went.
func Status(r matrix.Row) string {
	switch {
	case r.Problem != "":
		return "not run: " + r.Problem
	case r.Result == nil:
		return "-"
	case r.Result.Error != nil:
		return string(r.Result.Error.Code) + ": " + r.Result.Error.Message
	}
	return "ok"
}

func methodColumn(title, method string) Column {
	return Column{Key: "m-" + title, Title: title, Value: func(r matrix.Row) string {
		return result(r, func(x *probe.Result) string {
			switch x.Methods[method].Support {
			case probe.Supported:
				return "yes"
			case probe.Unsupported:
				return "no"
			case probe.Unknown:
				return "?"
			}
			return "-"
		})
	}}
}

func result(r matrix.Row, f func(*probe.Result) string) string {
	if r.Result == nil {
		return "-"
	}
	return f(r.Result)
}

func flag(name string, on bool) string {
	if on {
		return name
	}
	return ""
}

func list(items ...string) string {
	var out []string
	for _, it := range items {
		if it != "" {
			out = append(out, it)
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// MatrixText writes the matrix as a terminal table, with long cells cut short.
func MatrixText(w io.Writer, m *matrix.Matrix) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var titles []string
	for _, c := range Columns {
		titles = append(titles, c.Title)
	}
	fmt.Fprintln(tw, strings.Join(titles, "\t"))
	for _, r := range m.Rows {
		var cells []string
		for _, c := range Columns {
			cells = append(cells, Cut(c.Value(r), 40))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// MatrixMarkdown writes the matrix as a GitHub-flavoured Markdown table.
func MatrixMarkdown(w io.Writer, m *matrix.Matrix) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# ACP capability matrix\n\nGenerated %s by acpprobe %s.\n\n", m.GeneratedAt, m.Version)
	b.WriteString("|")
	for _, c := range Columns {
		b.WriteString(" " + c.Title + " |")
	}
	b.WriteString("\n|")
	for _, c := range Columns {
		if c.Numeric {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range m.Rows {
		b.WriteString("|")
		for _, c := range Columns {
			b.WriteString(" " + mdEscape(c.Value(r)) + " |")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// Cut shortens s to n characters, marking the cut with an ellipsis.
func Cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
