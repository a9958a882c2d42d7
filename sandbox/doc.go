// Package sandbox gives one agent run a throwaway place to live, and reports what the agent did
// to the machine: the files it created, changed or deleted, and the browsers it tried to open.
//
// A Sandbox is a private directory (0700) holding the agent's HOME (with the XDG config, data,
// cache and state directories inside it), its own TMPDIR and XDG_RUNTIME_DIR, a throwaway
// workspace used as the working directory, and a directory of browser shims. The agent's
// environment is not a merge over the caller's: it is built from an allow-list (env.json,
// with the reason for each name), the variables the sandbox sets (HOME, TMPDIR, the XDG
// directories, the agents' own home variables such as CODEX_HOME, also listed in env.json with
// their sources), and what the caller adds on purpose. Everything else is dropped and reported
// by name, never by value.
//
// Levels: record.LevelEnvHome needs no privilege and no namespace; it keeps a well-behaved agent's
// writes inside the sandbox, but it is not a security boundary (the agent runs as the user and
// can reach any path it names). record.LevelNet adds, on Linux where unprivileged user and network
// namespaces are allowed, a network namespace in which the agent sees only its own loopback.
// A Sandbox reports the level it actually put in force, never more.
//
// The side-effect report reads metadata only: file sizes, modes and times, never contents. It
// never follows a symbolic link, never opens anything but directories, and is bounded by a cap
// on the number of entries it looks at.
package sandbox
