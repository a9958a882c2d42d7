package derive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Model truth: each selection of the model or thought level option (or the legacy
// session/set_model), paired with the turn after it, and whether the model requests of that
// turn asked for what was selected.

// modelTruths pairs each selection (session/set_config_option of the model or thought level
// option, or the legacy session/set_model) with the prompt that follows it, and what the model
// requests of that prompt asked for. An accepted selection followed by another selection, not
// by a prompt, sets the stage for the next one (the model put back to the session's own before
// the thought levels are tried): it has no turn of its own and is not judged.
func modelTruths(x *record.Index, frames []jsonrpc.Frame, runs []*turnRun) []report.ModelTruth {
	ns := acp.ParseSessionResult(sessionResultOf(x, frames))
	opts, legacy := ns.ConfigOptions, ns.LegacyModels
	thought := acp.ThoughtLevelOption(opts)
	var out []report.ModelTruth
	for i, f := range frames {
		var t report.ModelTruth
		var p acp.Object
		if f.Msg != nil {
			p = acp.ParseObject(f.Msg.Params)
		}
		switch {
		case isClientRequest(f, acp.MethodSetConfigOption):
			t.Option, t.Value = p.String("configId"), p.String("value")
		case isClientRequest(f, acp.MethodSetModel):
			t.Option, t.Value = acp.MethodSetModel, p.String("modelId")
		default:
			continue
		}
		t.Seq, t.Requested = f.Seq, []string{}
		if a, ok := x.AnswerTo(f.Seq); ok && a.Msg.Err() == nil {
			t.Set = true
		} else if ok {
			e := a.Msg.Err()
			t.Refused = fmt.Sprintf("%d %s", e.Code, e.Message)
		}
		if t.Set && stagesNext(frames[i+1:]) {
			continue
		}
		isThought := thought != nil && t.Option == thought.ID
		if r := runAfter(runs, f.Seq); r != nil && t.Set {
			for _, m := range r.models {
				v := m.model
				if isThought {
					v = m.reason
				}
				if v != "" && !slices.Contains(t.Requested, v) {
					t.Requested = append(t.Requested, v)
				}
			}
		}
		var others []string
		if t.Option == acp.MethodSetModel {
			for _, m := range legacy {
				others = append(others, m.ID)
			}
		} else {
			for _, o := range opts {
				if o.ID == t.Option {
					others = o.Values()
				}
			}
		}
		t.Reached, t.Alias = reached(t.Value, others, t.Requested), alias(t.Value)
		out = append(out, t)
	}
	return out
}

// runAfter is the first prompt after seq.
// stagesNext says whether the client's next request after a selection is another selection
// rather than a prompt.
func stagesNext(after []jsonrpc.Frame) bool {
	for _, f := range after {
		switch {
		case isClientRequest(f, acp.MethodSessionPrompt):
			return false
		case isClientRequest(f, acp.MethodSetConfigOption), isClientRequest(f, acp.MethodSetModel):
			return true
		}
	}
	return false
}

func runAfter(runs []*turnRun, seq int64) *turnRun {
	for _, r := range runs {
		if r.prompt.Seq > seq {
			return r
		}
	}
	return nil
}

// reached says whether the requests asked for value: true when value is the option's value a
// request names best, false when another of the option's values is, nil when nothing tells
// (no request, or an alias such as "default" or "auto" that names no model).
func reached(value string, values, requested []string) *bool {
	if len(requested) == 0 || value == "" {
		return nil
	}
	if !slices.Contains(values, value) {
		values = append(slices.Clone(values), value)
	}
	yes, no := true, false
	for _, req := range requested {
		if best(req, values) == value {
			return &yes
		}
	}
	if alias(value) {
		return nil
	}
	for _, req := range requested {
		if b := best(req, values); b != "" && !alias(b) {
			return &no
		}
	}
	return nil
}

// best is the value a requested model names best: the one it equals, else the one with the
// most words that it names ("gpt-5.1-codex-mini" names gpt-5.1-codex-mini before
// gpt-5.1-codex); "" when it names none or two equally.
func best(requested string, values []string) string {
	top, topWords, tie := "", 0, false
	for _, v := range values {
		if !names(requested, v) {
			continue
		}
		if normalise(v) == strings.ToLower(requested) {
			return v
		}
		switch n := len(words(normalise(v))); {
		case n > topWords:
			top, topWords, tie = v, n, false
		case n == topWords:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return top
}

// alias reports whether a value names a choice rather than a model or a level: a default, an
// automatic choice, or a switch turned on at its own level ("enabled", "on": CodeBuddy Code's
// thought_level enabled asks for effort=high).
func alias(value string) bool {
	v := strings.ToLower(value)
	return strings.Contains(v, "default") || strings.Contains(v, "auto") || v == "enabled" || v == "on" || v == "true"
}

// names reports whether a requested model (or reasoning setting) names value: the whole
// value, or every word of it, appears in the request as whole words ("sonnet[1m]" names
// "claude-sonnet-4-6"; "high" names "effort=high" but not "effort=xhigh").
func names(requested, value string) bool {
	req, val := strings.ToLower(requested), normalise(value)
	if val == "" {
		return false
	}
	if req == val || strings.HasSuffix(req, "/"+val) {
		return true
	}
	have, want := words(req), words(val)
	if len(want) == 0 {
		return false
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// normalise lowers a value and drops what names no model: a context-size suffix
// ("sonnet[1m]") and a provider's or Gemini's prefix ("anthropic/claude-fable-5": opencode's
// model ids; "models/gemini-3-pro"), which the model request does not carry.
func normalise(value string) string {
	v := strings.ToLower(value)
	if i := strings.IndexByte(v, '['); i > 0 {
		v = v[:i]
	}
	if i := strings.LastIndexByte(v, '/'); i >= 0 {
		v = v[i+1:]
	}
	return v
}

// words splits a model name into its words (letters, digits and dots).
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '.') })
}
