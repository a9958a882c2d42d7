#!/usr/bin/env bash
# run.sh runs acpprobe's end-to-end benchmarks (see ../BENCHMARKS.md): it builds acpprobe, the
# driver, the raw client (the floor) and the agent shim into bench/bin, installs the pinned
# TypeScript SDK (the peer) into bench/node_modules, and runs the driver, which times the ACP
# handshake done by each, interleaved, against the reference agent and against the real
# agents scripts/install-e2e-agents.sh installed (those missing are skipped). It needs go,
# node and npm, and reaches nothing but the npm registry (once, for the SDK).
#
#   bench/run.sh                          # defaults: 30 rounds (reference), 4 per real agent
#   bench/run.sh -rounds 100 -agents reference
#   bench/run.sh -shim=false              # off Linux: client figures then include the agent
#
# Arguments go to the driver (go run ./bench/driver -h lists them). Results: bench/results/.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
root=$(cd -- "$here/.." && pwd -P)
cd "$root"

for tool in go node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "bench/run.sh: $tool is not on PATH" >&2
		exit 1
	fi
done

echo "bench/run.sh: building acpprobe, driver, rawclient, agentshim into bench/bin" >&2
mkdir -p bench/bin
# acpprobe as README.md builds it: static (CGO_ENABLED=0), as the floor is.
CGO_ENABLED=0 go build -o bench/bin/acpprobe ./cmd/acpprobe
go build -o bench/bin/driver ./bench/driver
go build -o bench/bin/rawclient ./bench/rawclient
if [[ $(go env GOOS) == linux ]]; then
	go build -o bench/bin/agentshim ./bench/agentshim
fi

# The peer: @agentclientprotocol/sdk at the exact version pinned in bench/package.json.
want=$(node -p 'require("./bench/package.json").dependencies["@agentclientprotocol/sdk"]')
have=$(node -p 'try { require("./bench/node_modules/@agentclientprotocol/sdk/package.json").version } catch (e) { "" }')
if [[ "$have" != "$want" ]]; then
	echo "bench/run.sh: installing @agentclientprotocol/sdk@$want into bench/node_modules" >&2
	(cd bench && npm install --no-audit --no-fund --no-save --loglevel=error)
fi

if [[ ! -d e2e/.agents/node_modules/.bin ]]; then
	echo "bench/run.sh: no real agents installed (scripts/install-e2e-agents.sh): reference agent only" >&2
fi

exec bench/bin/driver -root "$root" "$@"
