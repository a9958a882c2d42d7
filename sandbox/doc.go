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
// The agent can write where the sandbox does, and can plant links, mounts (as root) and
// unreadable directories there: everything the sandbox writes or removes after creating its
// directory goes through that directory as it was created (held open: replacing its path
// changes nothing), never through a link nor across a mount point (internal/safefs), and what
// Close could not remove is in its error (Leftovers).
//
// The side-effect report reads metadata only: file sizes, modes and times, never contents. It
// walks by directory descriptors (any path length, maxWalkDepth levels), never follows a
// symbolic link, never crosses a mount point, never opens anything but directories, names the
// directories it could not look into (record.Files.Unseen), and is bounded by a cap on the
// number of entries it looks at.
package sandbox
