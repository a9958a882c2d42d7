package render

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/registry"
	"github.com/acpprobe/acpprobe/report"
)

// Column is one column of the capability matrix.
type Column struct {
	Key   string // stable key (HTML data attributes, JSON)
	Title string
	// Short is the title in a narrow text table ("" when Title is short enough).
	Short string
	// Numeric columns sort by number.
	Numeric bool
	Value   func(matrix.Row) string
}

// Cells of the matrix that say nothing is there, or nothing is known.
const (
	// None: the agent has none (no modes, no models), or was not run.
	None = "-"
	// NotKnown: the agent never said: it never answered initialize, or session/new did not
	// succeed (modes, models, config options, reasoning), or the method was not probed or got
	// no answer.
	NotKnown = "?"
)

// Columns are the matrix columns, in order.
var Columns = []Column{
	{Key: "agent", Title: "Agent", Value: func(r matrix.Row) string { return r.ID }},
	{Key: "version", Title: "Version", Value: func(r matrix.Row) string {
		return initialized(r, func(x *report.Result) string {
			if x.AgentInfo == nil {
				return None
			}
			return strings.TrimSpace(x.AgentInfo.Name + " " + x.AgentInfo.Version)
		})
	}},
	{Key: "protocol", Title: "Protocol", Numeric: true, Value: func(r matrix.Row) string {
		return initialized(r, func(x *report.Result) string {
			if x.ProtocolVersion == nil {
				return NotKnown
			}
			return fmt.Sprint(*x.ProtocolVersion)
		})
	}},
	{Key: "auth", Title: "Auth", Value: func(r matrix.Row) string {
		return result(r, func(x *report.Result) string { return string(x.Auth.Status) })
	}},
	{Key: "prompt", Title: "Prompt content", Short: "Prompt", Value: func(r matrix.Row) string {
		return initialized(r, func(x *report.Result) string {
			p := x.Capabilities.PromptCapabilities
			return list(flag("image", p.Image), flag("audio", p.Audio), flag("resource", p.EmbeddedContext))
		})
	}},
	{Key: "mcp", Title: "MCP", Value: func(r matrix.Row) string {
		return initialized(r, func(x *report.Result) string {
			m := x.Capabilities.McpCapabilities
			return list("stdio", flag("http", m.HTTP), flag("sse", m.SSE), flag("acp", m.ACP))
		})
	}},
	{Key: "sessions", Title: "Session caps", Short: "Sessions", Value: func(r matrix.Row) string {
		return initialized(r, func(x *report.Result) string {
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
		return session(r, func(x *report.Result) string {
			var ids []string
			for _, m := range x.Modes {
				ids = append(ids, m.ID)
			}
			return list(ids...)
		})
	}},
	{Key: "models", Title: "Models", Value: func(r matrix.Row) string {
		return session(r, func(x *report.Result) string {
			return list(modelIDs(x)...)
		})
	}},
	{Key: "config", Title: "Config options", Short: "Config", Value: func(r matrix.Row) string {
		return session(r, func(x *report.Result) string {
			var ids []string
			for _, o := range x.ConfigOptions {
				ids = append(ids, o.ID)
			}
			return list(ids...)
		})
	}},
	{Key: "reasoning", Title: "Reasoning", Value: func(r matrix.Row) string {
		return session(r, func(x *report.Result) string {
			if x.Reasoning == nil {
				return None
			}
			return list(x.Reasoning.Values...)
		})
	}},
	{Key: "findings", Title: "Findings M/C/A/I", Short: "M/C/A/I", Value: func(r matrix.Row) string {
		return result(r, func(x *report.Result) string {
			if len(x.Findings) == 0 && !Initialized(x) {
				return NotKnown
			}
			n := map[report.Tier]int{}
			for _, f := range x.Findings {
				n[f.Tier]++
			}
			return fmt.Sprintf("%d/%d/%d/%d", n[report.TierMandatory], n[report.TierCapability], n[report.TierAdvisory], n[report.TierInfo])
		})
	}},
	{Key: "startup", Title: "Startup ms", Short: "Start ms", Numeric: true, Value: func(r matrix.Row) string {
		return initialized(r, func(x *report.Result) string {
			if x.Timings.SpawnToInitializeMs == 0 {
				return None
			}
			return fmt.Sprintf("%.0f", x.Timings.SpawnToInitializeMs)
		})
	}},
	{Key: "effects", Title: "Side effects", Short: "Effects", Value: effectsCell},
	{Key: "authab", Title: "Auth A/B", Value: func(r matrix.Row) string {
		return result(r, func(x *report.Result) string {
			if x.AuthAB == nil {
				return None
			}
			return string(x.AuthAB.Status)
		})
	}},
	{Key: "status", Title: "Status", Value: Status},
}

// TurnColumns are the columns of matrix --turns: how each prompt-turn scenario a user asks
// about came out (TurnCell).
var TurnColumns = []Column{turnColumn("Completion", "Turn", record.ScenarioCompletion), turnColumn("Model truth", "Models", record.ScenarioModels),
	turnColumn("Permission", "Perm", record.ScenarioPermission), turnColumn("Cancel", "", record.ScenarioCancel),
	turnColumn("Sessions", "Sess", record.ScenarioSessions), turnColumn("MCP reach", "MCP", record.ScenarioMCP)}

func turnColumn(title, short string, s record.Scenario) Column {
	return Column{Key: "t-" + string(s), Title: title, Short: short, Value: func(r matrix.Row) string { return TurnCell(r.Result, s) }}
}

// ColumnsOf are the columns of a matrix: Columns, with TurnColumns before the status when a
// row has turns.
func ColumnsOf(m *matrix.Matrix) []Column {
	for _, r := range m.Rows {
		if r.Result != nil && len(r.Result.Turns) > 0 {
			n := len(Columns) - 1
			return slices.Concat(Columns[:n], TurnColumns, Columns[n:])
		}
	}
	return Columns
}

// Status says in a few words how the probe of a row went.
func Status(r matrix.Row) string {
	switch {
	case r.Problem != "":
		return "not run: " + r.Problem
	case r.Result == nil:
		return None
	case r.Result.Error != nil:
		return string(r.Result.Error.Code) + ": " + r.Result.Error.Message
	}
	return "ok"
}

// Reason says in full why a row is not ok: its status, and for a probe that failed the line
// of its stderr that says why ("" for a row that is ok). The text and Markdown matrices list
// it under the table (their status cell is cut, or is only the probe's message); the HTML
// matrix shows it in the status cell.
func Reason(r matrix.Row) string {
	status := Status(r)
	if status == "ok" || status == None {
		return ""
	}
	if r.Result == nil || r.Result.Error == nil {
		return status
	}
	if why := stderrReason(cmp.Or(r.Result.Error.Stderr, r.Result.StderrTail)); why != "" && !strings.Contains(r.Result.Error.Message, why) {
		status += "; stderr: " + why
	}
	return status
}

// stderrReason is the line of an agent's stderr that says why it failed, cut to reasonMax
// columns: what npm said it could not fetch (registry.ParseNPMError), else the last line that
// names an error, else the last line that is not a stack frame or a runtime's version banner;
// "" when stderr says nothing.
func stderrReason(stderr string) string {
	if np := registry.ParseNPMError(stderr, ""); np != nil {
		return Cut(np.Error(), reasonMax)
	}
	var last, failure string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "", strings.HasPrefix(l, "at "), strings.HasPrefix(l, "Node.js v"):
		case errorWords().MatchString(l):
			failure, last = l, l
		default:
			last = l
		}
	}
	return Cut(cmp.Or(failure, last), reasonMax)
}

// errorWords marks a line of stderr that says what went wrong.
var errorWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(error|fatal|panic|exception|failed|cannot|denied|refused|not found)\b`)
})

// reasonMax is the most columns of stderr a reason quotes.
const reasonMax = 160

func methodColumn(title, method string) Column {
	return Column{Key: "m-" + title, Title: title, Value: func(r matrix.Row) string {
		return initialized(r, func(x *report.Result) string {
			switch x.Methods[method].Support {
			case report.Supported:
				return "yes"
			case report.Unsupported:
				return "no"
			}
			return NotKnown // no answer, or not probed
		})
	}}
}

// result is f of the row's result, or None when the agent was not run.
func result(r matrix.Row, f func(*report.Result) string) string {
	if r.Result == nil {
		return None
	}
	return f(r.Result)
}

// initialized is f of the row's result, or NotKnown when the agent never answered
// initialize.
func initialized(r matrix.Row, f func(*report.Result) string) string {
	return result(r, func(x *report.Result) string {
		if !Initialized(x) {
			return NotKnown
		}
		return f(x)
	})
}

// session is f of the row's result, or NotKnown when session/new did not succeed.
func session(r matrix.Row, f func(*report.Result) string) string {
	return initialized(r, func(x *report.Result) string {
		if !sessionCreated(x) {
			return NotKnown
		}
		return f(x)
	})
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
		return None
	}
	return strings.Join(out, ", ")
}

// cellWidth is the most columns a cell takes in the full text table.
const cellWidth = 40

// MatrixText writes the matrix as a terminal table, laid out for the width of w (see Screen):
//   - width unknown (a file, a pipe): every column, each cell cut at 40 columns;
//   - every column fits: the same;
//   - otherwise a narrow table (narrowMatrix): the agent, the columns that fit in order of
//     priority, the six method columns as one, and the status cut to what is left, with a
//     line naming the columns left out;
//   - narrower than the agent and 16 columns of status: one block per agent (verticalMatrix).
//
// Under a table, each row that is not ok has a line saying why, in full (Reason).
func MatrixText(w io.Writer, m *matrix.Matrix) error {
	width := screenOf(w).Width
	columns := ColumnsOf(m)
	var titles []string
	for _, c := range columns {
		titles = append(titles, c.Title)
	}
	rows := [][]string{titles}
	for _, r := range m.Rows {
		var cells []string
		for _, c := range columns {
			cells = append(cells, Cut(c.Value(r), cellWidth))
		}
		rows = append(rows, cells)
	}
	var err error
	switch {
	case width <= 0 || tableWidth(rows) <= width:
		err = writeTable(w, rows, 0)
	default:
		var vertical bool
		if vertical, err = narrowMatrix(w, m, width); vertical {
			return err // each block says its reason
		}
	}
	if err != nil {
		return err
	}
	if err := reasonsText(w, m); err != nil {
		return err
	}
	return matrixSurfacesText(w, m.Surfaces)
}

// reasonsText writes, under the table, why each row that is not ok is not (Reason), in full.
func reasonsText(w io.Writer, m *matrix.Matrix) error {
	t := &textWriter{w: w, width: screenOf(w).lineWidth()}
	notOK := reasons(m)
	if len(notOK) > 0 {
		t.section("Not ok")
	}
	for _, r := range notOK {
		t.line(r.id + ": " + r.why)
	}
	return t.err
}

// rowReason is a row that is not ok: its id and Reason.
type rowReason struct{ id, why string }

// reasons are the rows of m that are not ok, in order.
func reasons(m *matrix.Matrix) []rowReason {
	var out []rowReason
	for _, r := range m.Rows {
		if why := Reason(r); why != "" {
			out = append(out, rowReason{r.ID, why})
		}
	}
	return out
}

// tableWidth is the width of the widest line writeTable would write for rows.
func tableWidth(rows [][]string) int {
	var widths []int
	last := 0
	for _, row := range rows {
		for i, c := range row {
			c = Clean(c)
			if i == len(row)-1 {
				last = max(last, Width(c))
				continue
			}
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], Width(c))
		}
	}
	total := last
	for _, w := range widths {
		total += w + 2
	}
	return total
}

// narrowColumn is a column of the narrow text table: title, value, and the most columns a
// cell takes.
type narrowColumn struct {
	key, title string
	value      func(matrix.Row) string
	max        int
}

// narrowPriority is the order in which columns join the narrow table after the agent (the
// status comes last, taking what is left): how the probe went first, then what a client
// needs to decide, then detail.
var narrowPriority = []string{"auth", "findings", "t-completion", "t-permission", "t-cancel", "t-sessions", "t-mcp", "t-model-truth", "protocol", "methods", "version", "sessions", "prompt", "mcp", "modes", "config", "models", "reasoning", "effects", "authab", "startup"}

const (
	agentMax    = 24 // the most columns the agent id takes in a narrow table
	statusWidth = 16 // the fewest columns left for the status
	statusMax   = 40 // the most columns kept for the status (and a third of the width) before other columns join
)

// narrowMatrix writes the table of the agent, the status (up to statusMax columns, and a third
// of the width, kept for it), and each column of narrowPriority, in that order, that still
// fits width; then a line naming the columns left out. Narrower than that it writes the
// blocks of verticalMatrix, and says so (vertical).
func narrowMatrix(w io.Writer, m *matrix.Matrix, width int) (vertical bool, err error) {
	var methods []Column
	columns := ColumnsOf(m)
	cols := map[string]narrowColumn{}
	for _, c := range columns {
		title := c.Title
		if c.Short != "" {
			title = c.Short
		}
		if strings.HasPrefix(c.Key, "m-") {
			methods = append(methods, c)
			continue
		}
		cols[c.Key] = narrowColumn{key: c.Key, title: title, value: c.Value, max: 24}
	}
	cols["agent"] = narrowColumn{key: "agent", title: "Agent", value: cols["agent"].value, max: agentMax}
	cols["methods"] = narrowColumn{key: "methods", title: "Methods", max: 34, value: func(r matrix.Row) string {
		if r.Result == nil {
			return None
		}
		var yes []string
		unknown := 0
		for _, c := range methods {
			switch c.Value(r) {
			case "yes":
				yes = append(yes, c.Title)
			case NotKnown:
				yes = append(yes, c.Title+NotKnown)
				unknown++
			}
		}
		if unknown == len(methods) {
			return NotKnown
		}
		return list(strings.Join(yes, " "))
	}}

	// measured is how many columns c takes: its widest cell, at most c.max.
	measured := func(c narrowColumn) int {
		n := Width(c.title)
		for _, r := range m.Rows {
			n = max(n, Width(Cut(c.value(r), c.max)))
		}
		return min(n, c.max)
	}
	agentWidth := measured(cols["agent"])
	if width < agentWidth+2+statusWidth {
		return true, verticalMatrix(w, m, width)
	}
	// The status keeps up to statusMax columns before other columns join.
	status := 0
	for _, r := range m.Rows {
		status = max(status, Width(Clean(Status(r))))
	}
	status = max(statusWidth, min(status, statusMax, width/3, width-agentWidth-2))
	used := agentWidth + 2 + status
	chosen := map[string]int{"agent": agentWidth}
	var left []string
	for _, key := range narrowPriority {
		c, ok := cols[key]
		if !ok {
			continue // a turn column of a matrix without turns
		}
		if n := measured(c); used+n+2 <= width {
			chosen[key] = n
			used += n + 2
		} else {
			left = append(left, c.title)
		}
	}
	order := []string{"agent"}
	for _, c := range columns {
		key := c.Key
		if strings.HasPrefix(key, "m-") {
			key = "methods"
		}
		if _, ok := chosen[key]; ok && !slices.Contains(order, key) {
			order = append(order, key)
		}
	}
	header := make([]string, 0, len(order)+1)
	for _, key := range order {
		header = append(header, cols[key].title)
	}
	rows := [][]string{append(header, "Status")}
	start := used - status
	for _, r := range m.Rows {
		cells := make([]string, 0, len(order)+1)
		for _, key := range order {
			cells = append(cells, Cut(cols[key].value(r), chosen[key]))
		}
		rows = append(rows, append(cells, Cut(Status(r), width-start)))
	}
	if err := writeTable(w, rows, width); err != nil {
		return false, err
	}
	if len(left) == 0 {
		return false, nil
	}
	t := &textWriter{w: w, width: width}
	t.hang(fmt.Sprintf("(%d columns left out to fit %d: %s; a wider terminal, or --format md, html or json, shows them)", len(left), width, strings.Join(left, ", ")), 1)
	return false, t.err
}

// verticalMatrix writes each agent as a block: its id and status (in full: Reason), then one
// line per column.
func verticalMatrix(w io.Writer, m *matrix.Matrix, width int) error {
	t := &textWriter{w: w, width: width}
	columns := ColumnsOf(m)
	for i, r := range m.Rows {
		if i > 0 {
			t.hang("", 0)
		}
		t.hang(r.ID+": "+cmp.Or(Reason(r), Status(r)), 4)
		for _, c := range columns[1 : len(columns)-1] {
			title := c.Title
			if strings.HasPrefix(c.Key, "m-") {
				title = "session/" + title
			}
			t.hang(fmt.Sprintf("  %s: %s", title, c.Value(r)), 4)
		}
	}
	return t.err
}

// modelIDs are the models of a row: the ones set_config_option accepts (modelConfig) when the
// agent has a model option, else the ones it declares in session/new.
func modelIDs(x *report.Result) []string {
	if x.ModelConfig != nil {
		return x.ModelConfig.Values
	}
	ids := make([]string, 0, len(x.Models))
	for _, m := range x.Models {
		ids = append(ids, m.ID)
	}
	return ids
}
