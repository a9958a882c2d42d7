package derive

import "testing"

// names matches a selected value against the model a request asked for, by whole words.
func TestNames(t *testing.T) {
	for _, c := range []struct {
		req, value string
		want       bool
	}{
		{"claude-sonnet-4-6", "sonnet", true},
		{"claude-sonnet-4-6", "sonnet[1m]", true},
		{"claude-opus-4-1", "sonnet", false},
		{"effort=high", "high", true},
		{"effort=xhigh", "high", false},
		{"gpt-5.1-codex", "gpt-5.1-codex", true},
		{"gpt-5.1-codex-mini", "gpt-5.1-codex", true},
		{"models/gemini-2.5-pro", "gemini-2.5-pro", true},
		{"gemini-2.5-flash", "gemini-2.5-pro", false},
		{"m", "", false},
	} {
		if got := names(c.req, c.value); got != c.want {
			t.Errorf("names(%q, %q) = %v, want %v", c.req, c.value, got, c.want)
		}
	}
}

// reached decides by the value a request names best, so that a longer model name is not taken
// for a shorter one, and says nothing for an alias.
func TestReached(t *testing.T) {
	values := []string{"default", "gpt-5.1-codex", "gpt-5.1-codex-mini"}
	show := func(b *bool) string {
		if b == nil {
			return "?"
		}
		if *b {
			return "yes"
		}
		return "no"
	}
	for _, c := range []struct {
		value     string
		requested []string
		want      string
	}{
		{"gpt-5.1-codex", []string{"gpt-5.1-codex"}, "yes"},
		{"gpt-5.1-codex", []string{"gpt-5.1-codex-mini"}, "no"},
		{"gpt-5.1-codex-mini", []string{"gpt-5.1-codex-mini"}, "yes"},
		{"default", []string{"gpt-5.1-codex"}, "?"},
		{"gpt-5.1-codex", nil, "?"},
		{"gpt-5.1-codex", []string{"o3"}, "?"},
	} {
		if got := show(reached(c.value, values, c.requested)); got != c.want {
			t.Errorf("reached(%q, %v) = %s, want %s", c.value, c.requested, got, c.want)
		}
	}
	// opencode names its models provider/model; the request names the model alone.
	prefixed := []string{"anthropic/claude-fable-5", "anthropic/claude-fable-5-1", "anthropic/claude-haiku-4-5"}
	for _, c := range []struct {
		value     string
		requested []string
		want      string
	}{
		{"anthropic/claude-fable-5", []string{"claude-haiku-4-5-20251001", "claude-fable-5"}, "yes"},
		{"anthropic/claude-fable-5-1", []string{"claude-fable-5-1"}, "yes"},
		{"anthropic/claude-fable-5", []string{"claude-fable-5-1"}, "no"},
	} {
		if got := show(reached(c.value, prefixed, c.requested)); got != c.want {
			t.Errorf("reached(%q, %v) = %s, want %s", c.value, c.requested, got, c.want)
		}
	}
	// A thought level that switches thinking on at its own level (CodeBuddy Code's enabled,
	// which asks for effort=high) tells nothing: it is no miss of high.
	levels := []string{"disabled", "high", "max", "enabled"}
	for _, c := range []struct {
		value     string
		requested []string
		want      string
	}{
		{"enabled", []string{"effort=high"}, "?"},
		{"high", []string{"effort=high"}, "yes"},
		{"max", []string{"effort=xhigh"}, "?"},
		{"max", []string{"effort=high"}, "no"},
	} {
		if got := show(reached(c.value, levels, c.requested)); got != c.want {
			t.Errorf("reached(%q, %v) = %s, want %s", c.value, c.requested, got, c.want)
		}
	}
}
