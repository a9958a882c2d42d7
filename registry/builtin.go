package registry

// Builtins returns the built-in entries: well-known agents that the embedded snapshot lacks
// or only has under an outdated package. They have Source "builtin" and never share an id
// with a snapshot entry; a registry file or agents config entry with the same id replaces them
// (Registry.With).
//
//   - codebuddy-code (alias codebuddy): Tencent's CodeBuddy Code CLI in ACP mode, run as
//     `codebuddy --acp --acp-transport stdio` from PATH (install: npm install -g
//     @tencent-ai/codebuddy-code). Not in the 2026-02-07 snapshot; the command line is the
//     one the CodeBuddy probing notes use. The id is the one the registry adopted later
//     (2026-08, where it is an npx entry), so a newer registry file supersedes this one.
//   - claude-acp (alias claude-agent-acp): the Claude ACP adapter under its current package,
//     @agentclientprotocol/claude-agent-acp. The snapshot's claude-code-acp pins the adapter's
//     first package, @zed-industries/claude-code-acp@0.16.0; upstream renamed it
//     (@zed-industries/claude-agent-acp, then @agentclientprotocol/claude-agent-acp) and the
//     registry replaced the claude-code-acp id with claude-acp. Data from
//     agentclientprotocol/registry claude-acp/agent.json at commit
//     05cdbae4d66b4c137576e40fc830b8e98bdcbda1.
func Builtins() []Entry {
	return []Entry{
		{
			ID:          "claude-acp",
			Name:        "Claude Agent",
			Version:     "0.85.1",
			Description: "ACP wrapper for Anthropic's Claude (current package of the claude-code-acp adapter)",
			Repository:  "https://github.com/agentclientprotocol/claude-agent-acp",
			Authors:     []string{"Anthropic", "Zed Industries", "JetBrains"},
			License:     "proprietary",
			LicenseURL:  "https://github.com/agentclientprotocol/claude-agent-acp/blob/main/LICENSE",
			Distribution: Distribution{
				NPX: &Package{Package: "@agentclientprotocol/claude-agent-acp@0.85.1"},
			},
			Listed:  true,
			Source:  SourceBuiltin,
			Origin:  "builtin: agentclientprotocol/registry claude-acp/agent.json @ 05cdbae4d66b4c137576e40fc830b8e98bdcbda1",
			Aliases: []string{"claude-agent-acp"},
		},
		{
			ID:          "codebuddy-code",
			Name:        "CodeBuddy Code",
			Description: "Tencent Cloud's coding agent CLI, in ACP mode over stdio (the codebuddy command on PATH)",
			Website:     "https://www.codebuddy.cn/cli/",
			Authors:     []string{"Tencent Cloud"},
			License:     "proprietary",
			Command: &Command{
				Command: "codebuddy",
				Args:    []string{"--acp", "--acp-transport", "stdio"},
				Install: "npm install -g @tencent-ai/codebuddy-code",
			},
			Listed:  true,
			Source:  SourceBuiltin,
			Origin:  "builtin: CodeBuddy ACP probing notes (codebuddy --acp --acp-transport stdio)",
			Aliases: []string{"codebuddy"},
		},
	}
}
