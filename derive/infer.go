package derive

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/report"
)

// Bounds of the inference. An agent's error may name any number of variants and fields (a
// hostile one lists 120k variants in 1 MB); the inference keeps the first ones it sees, in
// time linear in the errors' size, and says when it dropped some (InferenceTruncated).
const (
	maxInferredBranches = 64 // content-block branches
	maxInferredFields   = 64 // required fields of one branch, and fields named without a branch
)

// nameSet is a bounded set of names that keeps the order they were first added in.
type nameSet struct {
	order []string
	has   map[string]bool
	max   int
}

func newNameSet(max int) *nameSet { return &nameSet{has: map[string]bool{}, max: max} }

// add adds name; it reports false when the set is full and name is not in it.
func (s *nameSet) add(name string) bool {
	if s.has[name] {
		return true
	}
	if len(s.order) >= s.max {
		return false
	}
	s.has[name] = true
	s.order = append(s.order, name)
	return true
}

// inference accumulates what schema errors say about the accepted content blocks.
type inference struct {
	style    string
	types    *nameSet            // branch types in the order first seen
	required map[string]*nameSet // branch type → required fields (zod unions attribute them)
	loose    *nameSet            // required fields named without a branch
	// truncated is set when a bound dropped a name.
	truncated bool
}

func newInference() *inference {
	return &inference{types: newNameSet(maxInferredBranches), required: map[string]*nameSet{}, loose: newNameSet(maxInferredFields)}
}

var (
	expectedQuoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`expected "([a-z_]+)"`) })
	serdeMissing   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("missing field `([^`]+)`") })
)

// styleRank orders the error styles by what they tell about the accepted shapes: the style of
// a set of answers is the most telling one any of them shows, whatever the order they are read
// in.
var styleRank = map[string]int{"": 0, "text": 1, "serde": 2, "zod-issues": 3, "zod-tree": 4, "zod-union": 5}

func (inf *inference) setStyle(s string) {
	if styleRank[s] > styleRank[inf.style] {
		inf.style = s
	}
}

// addType adds a branch; it reports false when the bound dropped it.
func (inf *inference) addType(t string) bool {
	if !inf.types.add(t) {
		inf.truncated = true
		return false
	}
	return true
}

// addRequired adds a required field to a kept branch.
func (inf *inference) addRequired(branch, field string) {
	set := inf.required[branch]
	if set == nil {
		set = newNameSet(maxInferredFields)
		inf.required[branch] = set
	}
	if !set.add(field) {
		inf.truncated = true
	}
}

// addLoose adds a required field named without a branch.
func (inf *inference) addLoose(field string) {
	if !inf.loose.add(field) {
		inf.truncated = true
	}
}

// read learns from one error answer.
func (inf *inference) read(e *jsonrpc.Error) {
	var data any
	_ = json.Unmarshal(e.Data, &data)
	switch d := data.(type) {
	case []any:
		inf.readIssues(d)
	case map[string]any:
		if _, ok := d["_errors"]; ok {
			inf.setStyle("zod-tree")
			inf.readTree(d)
		}
		if s, ok := d["error"].(string); ok {
			inf.readText(s)
		}
		if issues, ok := d["issues"].([]any); ok {
			inf.readIssues(issues)
		}
	case string:
		inf.readText(d)
	}
	inf.readText(e.Message)
}

// readIssues reads a zod issue list: invalid_union issues carry one issue list per branch
// (zod 4: errors; zod 3: unionErrors[].issues).
func (inf *inference) readIssues(issues []any) {
	for _, it := range issues {
		issue, _ := it.(map[string]any)
		if issue == nil {
			continue
		}
		code, _ := issue["code"].(string)
		if code == "invalid_union" {
			inf.setStyle("zod-union")
			for _, b := range unionBranches(issue) {
				inf.readBranch(b)
			}
			continue
		}
		inf.setStyle("zod-issues")
		if field := missingField(issue); field != "" {
			inf.addLoose(field)
		}
	}
}

// unionBranches returns the issue list of each branch of an invalid_union issue.
func unionBranches(issue map[string]any) [][]any {
	var out [][]any
	if errs, ok := issue["errors"].([]any); ok {
		for _, b := range errs {
			if list, ok := b.([]any); ok {
				out = append(out, list)
			}
		}
	}
	if ues, ok := issue["unionErrors"].([]any); ok {
		for _, ue := range ues {
			if m, ok := ue.(map[string]any); ok {
				if list, ok := m["issues"].([]any); ok {
					out = append(out, list)
				}
			}
		}
	}
	return out
}

// readBranch reads the issues of one union branch: the literal its "type" expects names the
// branch, missing fields are its required fields.
func (inf *inference) readBranch(issues []any) {
	name := ""
	for _, it := range issues {
		issue, _ := it.(map[string]any)
		if last(issue["path"]) != "type" {
			continue
		}
		if vals, ok := issue["values"].([]any); ok && len(vals) == 1 {
			name, _ = vals[0].(string)
		} else if exp, ok := issue["expected"].(string); ok && issue["code"] == "invalid_literal" {
			name = exp
		} else if m := expectedQuoted().FindStringSubmatch(fmt.Sprint(issue["message"])); m != nil {
			name = m[1]
		}
	}
	if name == "" || !inf.addType(name) {
		return
	}
	inf.addRequired(name, "type")
	for _, it := range issues {
		issue, _ := it.(map[string]any)
		if issue == nil || last(issue["path"]) == "type" {
			continue
		}
		if field := missingField(issue); field != "" {
			inf.addRequired(name, field)
		} else if issue["code"] == "invalid_union" {
			if f := last(issue["path"]); f != "" {
				inf.addRequired(name, f)
			}
		}
	}
}

// missingField returns the field an issue says is missing ("received undefined").
func missingField(issue map[string]any) string {
	msg, _ := issue["message"].(string)
	received, _ := issue["received"].(string)
	if issue["code"] == "invalid_type" && (strings.Contains(msg, "received undefined") || received == "undefined") {
		return last(issue["path"])
	}
	return ""
}

func last(path any) string {
	p, _ := path.([]any)
	if len(p) == 0 {
		return ""
	}
	s, _ := p[len(p)-1].(string)
	return s
}

// readTree reads zod's formatted error tree ({_errors, field: {_errors}}): the literals "type"
// expects are the branches; fields "received undefined" are required, but the tree does not
// say by which branch.
func (inf *inference) readTree(node map[string]any) {
	keys := make([]string, 0, len(node))
	for k := range node {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the bounds keep the first names seen: see them in a fixed order
	for _, k := range keys {
		child, ok := node[k].(map[string]any)
		if !ok {
			continue
		}
		msgs, _ := child["_errors"].([]any)
		for _, m := range msgs {
			s, _ := m.(string)
			if k == "type" {
				for _, match := range expectedQuoted().FindAllStringSubmatch(s, -1) {
					inf.addType(match[1])
				}
			} else if strings.Contains(s, "received undefined") && !isIndex(k) {
				inf.addLoose(k)
			}
		}
		inf.readTree(child)
	}
}

func isIndex(k string) bool {
	for _, c := range k {
		if c < '0' || c > '9' {
			return false
		}
	}
	return k != ""
}

// readText reads serde-style messages: "unknown variant `x`, expected one of `a`, `b`" lists
// the branches; "missing field `f`" names a required field.
func (inf *inference) readText(s string) {
	if list, ok := serdeVariants(s); ok {
		inf.setStyle("serde")
		for rest := list; ; {
			var name string
			if name, rest, ok = nextBackticked(rest); !ok {
				break
			}
			inf.addType(name)
		}
	}
	if m := serdeMissing().FindStringSubmatch(s); m != nil {
		inf.setStyle("serde")
		inf.addLoose(m[1])
	}
	if s != "" {
		inf.setStyle("text")
	}
}

// serdeVariants finds the list of a serde "unknown variant `x`, expected [one of ]LIST" message:
// the rest of its line. A scan, not a regular expression: the list may be a megabyte long.
func serdeVariants(s string) (list string, ok bool) {
	const head, expected = "unknown variant `", "`, expected "
	for {
		i := strings.Index(s, head)
		if i < 0 {
			return "", false
		}
		s = s[i+len(head):]
		j := strings.IndexByte(s, '`')
		if j < 0 || !strings.HasPrefix(s[j:], expected) {
			continue
		}
		rest := s[j+len(expected):]
		if k := strings.IndexByte(rest, '\n'); k >= 0 {
			rest = rest[:k]
		}
		if list := strings.TrimPrefix(rest, "one of "); list != "" {
			return list, true
		}
		if rest != "" {
			return rest, true // "one of " is the list itself
		}
	}
}

// nextBackticked returns the first non-empty `name` of s and what follows it.
func nextBackticked(s string) (name, rest string, ok bool) {
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return "", "", false
		}
		s = s[i+1:]
		j := strings.IndexByte(s, '`')
		if j < 0 {
			return "", "", false
		}
		if j > 0 {
			return s[:j], s[j+1:], true
		}
		// An empty `` : its closing backtick may open the next name.
	}
}

func (inf *inference) branches() []report.ShapeBranch {
	out := []report.ShapeBranch{}
	for _, t := range inf.types.order {
		req := []string{}
		if set := inf.required[t]; set != nil {
			req = append(req, set.order...)
		}
		sort.Strings(req)
		out = append(out, report.ShapeBranch{Type: t, Required: req})
	}
	return out
}

func (inf *inference) requiredFields() []string {
	attributed := map[string]bool{}
	for _, fields := range inf.required {
		for _, f := range fields.order {
			attributed[f] = true
		}
	}
	var out []string
	for _, f := range inf.loose.order {
		if !attributed[f] {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}
