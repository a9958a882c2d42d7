#!/usr/bin/env bash
# install-e2e-agents.sh installs the real ACP agents the opt-in e2e suite (e2e/) probes, at
# pinned versions, into e2e/.agents of this clone (an ignored folder), and writes there an
# acpprobe agents config, agents.json, naming each agent's command. It needs node and npm and
# reaches nothing but the npm registry. Running it again is cheap: when every installed version
# already matches its pin and every agent's program is there, nothing is fetched.
#
#   scripts/install-e2e-agents.sh && ACPPROBE_E2E=1 go test ./e2e/ -v
#
# Options (scripts/e2e-latest.sh uses them):
#   --dest DIR   install into DIR instead of e2e/.agents
#   --latest     install what npm serves as `latest` of each package instead of its pin (npm is
#                asked again on every run); the versions installed are printed
#   --only NAME  install only the agent of this config name (repeatable)
set -euo pipefail

# The agents: config name | package@pin | program (relative to node_modules) | arguments |
# the interpreter that runs the program, if any. Change a pin here and the facts asserted in
# e2e/*_test.go together; before moving one, record the old pin's transcripts into
# testdata/agents (see its README). The config names are those the emulator's backend profiles
# match (emulator/profiles). CodeBuddy Code has no bin of its own in the SDK package that
# bundles it (cli/package.json: @tencent-ai/codebuddy-code 2.117.0): node runs its CLI.
AGENTS=(
	"claude|@agentclientprotocol/claude-agent-acp@0.101.0|.bin/claude-agent-acp||"
	"codex|@agentclientprotocol/codex-acp@2.6.0|.bin/codex-acp||"
	"gemini|@google/gemini-cli@0.61.0|.bin/gemini|--acp|"
	"qwen|@qwen-code/qwen-code@0.24.4|.bin/qwen|--acp|"
	"opencode|opencode-ai@1.18.33|.bin/opencode|acp|"
	"codebuddy|@tencent-ai/agent-sdk@0.3.201|@tencent-ai/agent-sdk/cli/bin/codebuddy|--acp|node"
)

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
root=$(cd -- "$script_dir/.." && pwd -P)
dest="$root/e2e/.agents"
latest=0
only=()
while (($# > 0)); do
	case "$1" in
	--dest | --only)
		if (($# < 2)); then
			echo "install-e2e-agents: $1 needs a value" >&2
			exit 2
		fi
		if [[ "$1" == --dest ]]; then dest=$2; else only+=("$2"); fi
		shift 2
		;;
	--latest)
		latest=1
		shift
		;;
	*)
		echo "install-e2e-agents: unknown argument $1 (usage: $0 [--dest DIR] [--latest] [--only NAME]...)" >&2
		exit 2
		;;
	esac
done

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "install-e2e-agents: $tool is not on PATH; install Node.js (with npm) first" >&2
		exit 1
	fi
done

# The agents asked for, and the npm specs to install.
selected=()
specs=()
for a in "${AGENTS[@]}"; do
	IFS='|' read -r id spec _ <<<"$a"
	if ((${#only[@]} > 0)) && [[ " ${only[*]} " != *" $id "* ]]; then
		continue
	fi
	selected+=("$a")
	if ((latest)); then spec="${spec%@*}@latest"; fi
	specs+=("$spec")
done
for id in "${only[@]}"; do
	if [[ " ${selected[*]%%|*} " != *" $id "* ]]; then
		echo "install-e2e-agents: --only $id: no such agent (${AGENTS[*]%%|*})" >&2
		exit 2
	fi
done

mkdir -p "$dest"
dest=$(cd -- "$dest" && pwd -P)

# installed_version NAME prints the version of package NAME installed under $dest, or nothing.
installed_version() {
	local pj="$dest/node_modules/$1/package.json"
	[[ -f "$pj" ]] || return 0
	node -e 'try { process.stdout.write(String(require(process.argv[1]).version || "")) } catch (e) {}' "$pj"
}

# opencode_runs says whether opencode-ai's bin is the platform binary its postinstall links
# (until then bin/opencode.exe is a stub that exits 1). It runs it with a throwaway HOME, so
# nothing is written into the caller's.
opencode_runs() {
	local bin="$dest/node_modules/.bin/opencode" scratch out
	[[ -x "$bin" ]] || return 1
	scratch=$(mktemp -d)
	out=$(HOME="$scratch" XDG_CONFIG_HOME="$scratch" XDG_DATA_HOME="$scratch" XDG_STATE_HOME="$scratch" \
		XDG_CACHE_HOME="$scratch" "$bin" --version 2>/dev/null) || out=""
	rm -rf "$scratch"
	[[ -n "$out" && "$out" == "$(installed_version opencode-ai)" ]]
}

missing=()
if ((latest)); then
	echo "install-e2e-agents: installing the latest of ${specs[*]%@latest} into $dest"
	missing=("${specs[@]}")
else
	for spec in "${specs[@]}"; do
		name=${spec%@*} # strip the version: the scope's leading @ stays
		want=${spec##*@}
		have=$(installed_version "$name")
		if [[ "$have" == "$want" ]]; then
			echo "install-e2e-agents: $name@$want already installed"
		else
			echo "install-e2e-agents: $name@$want needed (installed: ${have:-none})"
			missing+=("$spec")
		fi
	done
	for a in "${selected[@]}"; do
		IFS='|' read -r _ _ prog _ <<<"$a"
		if [[ ! -x "$dest/node_modules/$prog" ]] && ((${#missing[@]} == 0)); then
			echo "install-e2e-agents: $prog is missing from $dest/node_modules; reinstalling"
			missing=("${specs[@]}")
		fi
	done
fi

if ((${#missing[@]} > 0)); then
	# A package.json of its own keeps npm from walking up into a parent project.
	if [[ ! -f "$dest/package.json" ]]; then
		printf '{\n  "name": "acpprobe-e2e-agents",\n  "private": true,\n  "description": "Real ACP agents for the acpprobe e2e suite; written by scripts/install-e2e-agents.sh"\n}\n' >"$dest/package.json"
	fi
	# Install every package at once so npm resolves one consistent tree. --ignore-scripts: of
	# the install scripts in the tree, gemini-cli's and CodeBuddy's optional native helpers
	# (node-pty, keytar) would download prebuilt binaries or node headers from outside the npm
	# registry, and the agents run without them (npm 11 skips them by default anyway). The one
	# script an agent needs is opencode-ai's postinstall, run below on its own.
	npm install --no-audit --no-fund --save-exact --ignore-scripts --prefix "$dest" "${missing[@]}"
	if ((!latest)); then
		for spec in "${specs[@]}"; do
			name=${spec%@*}
			want=${spec##*@}
			have=$(installed_version "$name")
			if [[ "$have" != "$want" ]]; then
				echo "install-e2e-agents: $name: wanted $want, npm installed ${have:-nothing}" >&2
				exit 1
			fi
		done
	fi
fi

# opencode-ai's postinstall links the platform binary of the optional dependency npm installed
# with it (opencode-linux-x64 …); when that package is missing, it installs it with npm, from
# the same registry. Nothing else runs it, because of --ignore-scripts above.
if [[ -d "$dest/node_modules/opencode-ai" ]] && ! opencode_runs; then
	echo "install-e2e-agents: linking opencode's platform binary (opencode-ai's postinstall)"
	(cd "$dest/node_modules/opencode-ai" && node ./postinstall.mjs)
	if ! opencode_runs; then
		echo "install-e2e-agents: opencode-ai's postinstall ran, but $dest/node_modules/.bin/opencode --version does not print $(installed_version opencode-ai)" >&2
		exit 1
	fi
fi

# agents.json: an acpprobe agents config (README, "Agents config files") naming every agent's
# command line, for `acpprobe matrix --config` (scripts/e2e-latest.sh) and the suite
# (e2e_test.go's agentArgv). No path here may hold a space or a "|": the lines below are split
# on them.
node=$(command -v node)
case "$dest$node" in *" "* | *"|"*)
	echo "install-e2e-agents: $dest or $node holds a space or a |, which agents.json cannot name" >&2
	exit 1
	;;
esac
status=0
rows=()
echo "install-e2e-agents: agents in $dest (config $dest/agents.json):"
for a in "${selected[@]}"; do
	IFS='|' read -r id spec prog args interp <<<"$a"
	path="$dest/node_modules/$prog"
	line="$path${args:+ $args}"
	if [[ -n "$interp" ]]; then line="$(command -v "$interp") $line"; fi
	if [[ -x "$path" ]]; then
		echo "  $id: ${spec%@*} $(installed_version "${spec%@*}"): $line"
	else
		echo "  $id: $path (MISSING)" >&2
		status=1
	fi
	rows+=("$id|$line")
done
node -e '
	const [dest, ...rows] = process.argv.slice(1);
	const agents = {};
	for (const row of rows) {
		const [id, line] = row.split("|");
		const [command, ...args] = line.split(" ");
		agents[id] = args.length ? {command, args} : {command};
	}
	require("fs").writeFileSync(dest + "/agents.json", JSON.stringify({agents}, null, 2) + "\n");
' "$dest" "${rows[@]}"
exit "$status"
