package registry

// Builtins returns the built-in entries: well-known agents that the embedded snapshot lacks
// or only has under an outdated package. They have Source "builtin" and never share an id
// with a snapshot entry; a registry file or agents config entry with the same id replaces them
// (Registry.With).
//
//   - codebuddy-code (alias codebuddy): Tencent's CodeBuddy Code CLI in ACP mode, npx -y
//     @tencent-ai/codebuddy-code@2.156.0 --acp; its programs codebuddy and cbc run instead
//     when on PATH (Entry.Programs). Not in the 2026-02-07 snapshot; data from
//     agentclientprotocol/registry codebuddy-code/agent.json at commit
//     00f0798d693fa20cd2491b98a0a235c76cc74c2b, so a fetched index or newer registry file
//     supersedes this one. Some npm registries do not serve the package (the one acpprobe
//     was tested against answers E404); the same CLI ships inside @tencent-ai/agent-sdk
//     (PackageHint says how to run it).
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
			Name:        "Codebuddy Code",
			Version:     "2.156.0",
			Description: "Tencent Cloud's official intelligent coding tool",
			Website:     "https://www.codebuddy.cn/cli/",
			Authors:     []string{"Tencent Cloud"},
			License:     "Proprietary",
			LicenseURL:  "https://www.codebuddy.cn/agreement/",
			Distribution: Distribution{
				NPX: &Package{Package: "@tencent-ai/codebuddy-code@2.156.0", Args: []string{"--acp"}},
			},
			Listed:  true,
			Source:  SourceBuiltin,
			Origin:  "builtin: agentclientprotocol/registry codebuddy-code/agent.json @ 00f0798d693fa20cd2491b98a0a235c76cc74c2b",
			Aliases: []string{"codebuddy"},
		},
	}
}
