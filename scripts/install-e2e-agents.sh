#!/usr/bin/env bash
# install-e2e-agents.sh installs the real ACP agents the opt-in e2e suite (e2e/) probes, at
# pinned versions, into e2e/.agents of this clone (an ignored folder). It needs node and npm
# and reaches nothing but the npm registry. Running it again is cheap: packages whose
# installed version already matches the pin are left alone.
#
#   scripts/install-e2e-agents.sh && ACPPROBE_E2E=1 go test ./e2e/ -v
set -euo pipefail

# The pins: change them here (and the facts asserted in e2e/*_test.go) together.
PACKAGES=(
	"@zed-industries/claude-agent-acp@0.23.1"
	"@zed-industries/codex-acp@0.16.0"
	"@google/gemini-cli@0.61.0"
)
BINARIES=(claude-agent-acp codex-acp gemini)

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
root=$(cd -- "$script_dir/.." && pwd -P)
dest="$root/e2e/.agents"

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "install-e2e-agents: $tool is not on PATH; install Node.js (with npm) first" >&2
		exit 1
	fi
done

# installed_version NAME prints the version of NAME installed under $dest, or nothing.
installed_version() {
	local pj="$dest/node_modules/$1/package.json"
	[[ -f "$pj" ]] || return 0
	node -e 'try { process.stdout.write(String(require(process.argv[1]).version || "")) } catch (e) {}' "$pj"
}

missing=()
for spec in "${PACKAGES[@]}"; do
	name=${spec%@*}    # strip the version: the scope's leading @ stays
	want=${spec##*@}
	have=$(installed_version "$name")
	if [[ "$have" == "$want" ]]; then
		echo "install-e2e-agents: $name@$want already installed"
	else
		echo "install-e2e-agents: $name@$want needed (installed: ${have:-none})"
		missing+=("$spec")
	fi
done
for bin in "${BINARIES[@]}"; do
	if [[ ! -x "$dest/node_modules/.bin/$bin" ]] && ((${#missing[@]} == 0)); then
		echo "install-e2e-agents: $bin is missing from $dest/node_modules/.bin; reinstalling"
		missing=("${PACKAGES[@]}")
	fi
done

if ((${#missing[@]} > 0)); then
	mkdir -p "$dest"
	# A package.json of its own keeps npm from walking up into a parent project.
	if [[ ! -f "$dest/package.json" ]]; then
		printf '{\n  "name": "acpprobe-e2e-agents",\n  "private": true,\n  "description": "Real ACP agents for the acpprobe e2e suite; written by scripts/install-e2e-agents.sh"\n}\n' >"$dest/package.json"
	fi
	# Install every pin at once so npm resolves one consistent tree. --ignore-scripts: the
	# only install scripts in the tree are gemini-cli's optional native helpers (node-pty,
	# keytar), which would try to download prebuilt binaries or node headers from outside the
	# npm registry; gemini --acp runs without them, and npm 11 skips them by default anyway.
	npm install --no-audit --no-fund --save-exact --ignore-scripts --prefix "$dest" "${PACKAGES[@]}"
	for spec in "${PACKAGES[@]}"; do
		name=${spec%@*}
		want=${spec##*@}
		have=$(installed_version "$name")
		if [[ "$have" != "$want" ]]; then
			echo "install-e2e-agents: $name: wanted $want, npm installed ${have:-nothing}" >&2
			exit 1
		fi
	done
fi

echo "install-e2e-agents: agents in $dest/node_modules/.bin:"
status=0
for bin in "${BINARIES[@]}"; do
	path="$dest/node_modules/.bin/$bin"
	if [[ -x "$path" ]]; then
		echo "  $path"
	else
		echo "  $path (MISSING)" >&2
		status=1
	fi
done
exit "$status"
