package registry

import (
	"sort"
	"strings"
)

// maxSuggestions bounds UnknownAgentError.Suggestions.
const maxSuggestions = 5

// UnknownAgentError is returned for an id that is neither an entry nor an alias.
// Suggestions holds up to five known ids close to it, best first.
type UnknownAgentError struct {
	ID          string
	Suggestions []string
}

// Error implements error: `unknown agent "gemni"; did you mean: gemini?`.
func (e *UnknownAgentError) Error() string {
	msg := "unknown agent " + quote(e.ID)
	if len(e.Suggestions) > 0 {
		msg += "; did you mean: " + strings.Join(e.Suggestions, ", ") + "?"
	}
	return msg
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// suggest ranks the registry's ids and aliases against an unknown id: prefix matches first
// ("codex" -> codex-acp), then substrings ("copilot" -> github-copilot), then names within a
// small edit distance ("gemni" -> gemini); ties go to the closer spelling, then the shorter
// and alphabetically first name. Aliases are reported as the id they stand for.
func (r *Registry) suggest(id string) []string {
	q := strings.ToLower(strings.TrimSpace(id))
	if q == "" {
		return nil
	}
	type cand struct {
		id         string
		rank, dist int
		name       string
	}
	best := map[string]cand{}
	for _, name := range r.names() {
		n := strings.ToLower(name)
		d := editDistance(q, n)
		rank := -1
		switch {
		case len(q) >= 2 && (strings.HasPrefix(n, q) || strings.HasPrefix(q, n) && len(n) >= 3):
			rank = 0
		case len(q) >= 3 && (strings.Contains(n, q) || strings.Contains(q, n) && len(n) >= 3):
			rank = 1
		case d <= maxDistance(q):
			rank = 2
		}
		if rank < 0 {
			continue
		}
		// A close spelling of the whole name beats a mere prefix or substring.
		if d <= 1 {
			rank = -1
		}
		c := cand{id: r.canonical(name), rank: rank, dist: d, name: n}
		if old, ok := best[c.id]; !ok || less(c.rank, c.dist, c.name, old.rank, old.dist, old.name) {
			best[c.id] = c
		}
	}
	cs := make([]cand, 0, len(best))
	for _, c := range best {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.rank != b.rank || a.dist != b.dist || len(a.name) != len(b.name) {
			return less(a.rank, a.dist, a.name, b.rank, b.dist, b.name)
		}
		return a.id < b.id
	})
	var out []string
	for _, c := range cs {
		if len(out) == maxSuggestions {
			break
		}
		// Once a name matched as a prefix or substring (or nearly whole), looser
		// spellings are noise: "codex" suggests codex-acp, not qoder.
		if c.rank == 2 && c.dist > 1 && len(out) > 0 && cs[0].rank < 2 {
			break
		}
		out = append(out, c.id)
	}
	return out
}

func less(r1, d1 int, n1 string, r2, d2 int, n2 string) bool {
	if r1 != r2 {
		return r1 < r2
	}
	if d1 != d2 {
		return d1 < d2
	}
	if len(n1) != len(n2) {
		return len(n1) < len(n2)
	}
	return n1 < n2
}

// maxDistance is the largest edit distance still worth suggesting for a query.
func maxDistance(q string) int {
	switch n := len([]rune(q)); {
	case n <= 4:
		return 1
	case n <= 8:
		return 2
	default:
		return 3
	}
}

// editDistance is the optimal-string-alignment distance: insertions, deletions,
// substitutions and transpositions of adjacent runes each cost 1.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}
