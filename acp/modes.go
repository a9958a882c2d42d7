package acp

import (
	"regexp"
	"strings"
	"sync"
)

// A session mode says in its id, name and description whether the agent asks before it acts:
// "Manual: Always ask before making changes" (claude-agent-acp), "Default: Prompts for
// approval" (gemini-cli), "Always Ask" (CodeBuddy Code), "Read-only: Requires approval to edit
// files" (codex-acp) promise to ask; "Auto: Claude handles permission decisions", "Accept
// edits", "YOLO", "Plan", "Only ask for actions detected as potentially unsafe", "ask before
// writing outside the workspace" do not promise it for a write in the workspace. A mode that
// says neither does not promise it either: only a promise makes an unasked write a violation.
var (
	neverAsks = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(auto|automatically|yolo|bypass|full access|skips?|never|don'?t ask|only ask|outside the workspace|accepts?|plan|analy[sz]e only|disallows)\b`)
	})
	asks = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(ask|asks|always ask|manual|prompts? for|requires? approval|approval (is )?required|approval for|confirm)\b`)
	})
)

// PromisesToAsk reports whether a mode promises to ask before a file write in the workspace.
func PromisesToAsk(id, name, description string) bool {
	text := strings.ToLower(strings.Join([]string{strings.NewReplacer("-", " ", "_", " ").Replace(id), name, description}, " \n "))
	return !neverAsks().MatchString(text) && asks().MatchString(text)
}
