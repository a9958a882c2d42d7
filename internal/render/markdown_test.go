package render_test

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/report"
)

// markdownAttacks are agent strings that would change a Markdown table or make a link, an
// image or HTML of it (issue 11, F10: cmark-gfm split a row in three on CR; <img> rendered;
// javascript: links).
var markdownAttacks = []string{
	"a|b", `a\|b`, "a\rb", "a\nb", "a\r\nb",
	`<img src=http://evil.example/x.png>`, "<script>alert(1)</script>", "<http://evil.example>",
	"[click](javascript:alert(1))", "![img](http://evil.example/i.png)", "[ref]: http://evil.example",
	"`code`", "``a|b``", "http://evil.example/p", "https://evil.example", "javascript:alert(1)",
	"www.evil.example", "mail@evil.example", "mailto:mail@evil.example", "&#124;", "&lt;b&gt;", "&amp;",
	"# heading", "> quote", "- item", "1. item", "---", "**bold** _it_ ~~s~~", `\`, `\\|`, "|",
}

// attackMatrix holds one agent per attack, the attack in its id, version, modes, models,
// config options and error.
func attackMatrix() *matrix.Matrix {
	m := &matrix.Matrix{Schema: matrix.Schema, Version: "test", GeneratedAt: "2026-11-30T12:00:00Z"}
	for _, a := range markdownAttacks {
		m.Rows = append(m.Rows, matrix.Row{ID: a, Result: &report.Result{
			ProtocolVersion: intp(1),
			AgentInfo:       &acp.Implementation{Name: a, Version: a},
			Auth:            report.AuthStatus{Status: report.AuthAuthenticated},
			Modes:           []acp.Mode{{ID: a}, {ID: "plan"}},
			Models:          []acp.Model{{ID: a}},
			ConfigOptions:   []acp.ConfigOption{{ID: a}},
			Error:           &report.Error{Code: report.ErrUnknown, Message: a, Stderr: "fatal: " + a},
		}})
	}
	return m
}

func intp(n int) *int { return &n }

// TestMarkdownParsed (issue 11, F10): the Markdown matrix, parsed as GitHub-flavoured Markdown
// (goldmark with the GFM extensions: tables, autolinks), is one table with exactly a row per
// agent and a cell per column, each cell's text exactly the value Clean shows, then a list of
// why each agent is not ok, each item exactly its id and Reason, and no link, autolink, image,
// HTML or code node anywhere.
func TestMarkdownParsed(t *testing.T) {
	m := attackMatrix()
	var b bytes.Buffer
	if err := render.MatrixMarkdown(&b, m); err != nil {
		t.Fatal(err)
	}
	src := b.Bytes()
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(src))

	var tables, rows int
	var cells [][]*east.TableCell
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case east.KindTable:
			tables++
		case east.KindTableHeader, east.KindTableRow:
			rows++
			cells = append(cells, nil)
		case east.KindTableCell:
			cells[len(cells)-1] = append(cells[len(cells)-1], n.(*east.TableCell))
		case ast.KindLink, ast.KindAutoLink, ast.KindImage, ast.KindRawHTML, ast.KindHTMLBlock, ast.KindCodeSpan:
			t.Errorf("a %s node in the Markdown matrix", n.Kind())
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tables != 1 || rows != 1+len(m.Rows) {
		t.Fatalf("%d tables with %d rows, want 1 with a header and %d rows:\n%s", tables, rows, len(m.Rows), src)
	}

	// The text of each cell, as GitHub would show it: render the document and read the cells.
	var out bytes.Buffer
	if err := md.Convert(src, &out); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	for _, tag := range regexp.MustCompile(`<(\w+)`).FindAllStringSubmatch(page, -1) {
		switch tag[1] {
		case "h1", "p", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "strong": // the list: Reason
		default:
			t.Errorf("the rendered matrix has a <%s> element", tag[1])
		}
	}
	trs := regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(page, -1)
	if len(trs) != 1+len(m.Rows) {
		t.Fatalf("%d rendered rows, want %d", len(trs), 1+len(m.Rows))
	}
	cell := regexp.MustCompile(`(?s)<t[dh][^>]*>(.*?)</t[dh]>`)
	for i, r := range m.Rows {
		got := cell.FindAllStringSubmatch(trs[i+1][1], -1)
		if len(got) != len(render.Columns) {
			t.Errorf("row %d (%q): %d cells, want %d", i, r.ID, len(got), len(render.Columns))
			continue
		}
		for j, c := range render.Columns {
			if want := render.Clean(c.Value(r)); html.UnescapeString(got[j][1]) != want {
				t.Errorf("row %d (%q), column %s: shows %q, want %q", i, r.ID, c.Key, html.UnescapeString(got[j][1]), want)
			}
		}
	}
	// Under the table, one item a row that is not ok: its id and Reason, exactly as Clean shows them.
	items := regexp.MustCompile(`(?s)<li><strong>(.*?)</li>`).FindAllStringSubmatch(page, -1)
	if len(items) != len(m.Rows) {
		t.Fatalf("%d items under the table, want %d", len(items), len(m.Rows))
	}
	for i, r := range m.Rows {
		if got, want := html.UnescapeString(items[i][1]), render.Clean(r.ID)+"</strong>: "+render.Clean(render.Reason(r)); got != want {
			t.Errorf("row %d: the item shows %q, want %q", i, got, want)
		}
	}
	if !strings.Contains(page, "<td>a|b</td>") {
		t.Errorf("a | in a value does not show as itself")
	}
}
