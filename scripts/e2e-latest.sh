#!/usr/bin/env bash
# e2e-latest.sh shows, the day it happens, how the e2e agents npm serves as `latest` differ from
# the pinned ones (issue 20): it installs each agent's latest into a prefix of its own, runs the
# plain check matrix and the turn matrix (completion, permission, cancel) on the pinned installs
# and on the latest ones, and prints `acpprobe diff` of pinned against latest.
#
#   scripts/e2e-latest.sh [--out DIR] [--acpprobe BIN] [--pinned-config FILE] [--latest-config FILE] [AGENT...]
#
# It exits 1 only when acpprobe itself fails on the latest agents: it crashes or exits with a
# status no matrix answer has, it runs past its budget (E2E_LATEST_BUDGET, default 20m per
# matrix), its output is not a matrix, or a turn is not run because the route to the model
# emulator was not found or did not take for an agent that has a backend profile (acpprobe's
# profile, not the agent, is then out of date). What an agent does differently, down to
# crashing or failing to install, is printed as a report and never fails the run. The same
# failures on the pinned agents are printed as warnings (the pinned e2e suite is what judges
# those).
#
# E2E_LATEST_FLAGS replaces the probes' budget flags (default --timeout 2m --startup-timeout 90s
# --request-timeout 20s).
#
# Options:
#   --out DIR            where the results go (default: a new directory under $TMPDIR)
#   --acpprobe BIN       the acpprobe binary to run (default: built from this clone into DIR)
#   --pinned-config F    the agents config of the pinned agents (default: scripts/install-e2e-agents.sh,
#                        then e2e/.agents/agents.json)
#   --latest-config F    the agents config of the latest agents (default: each agent's latest
#                        installed by scripts/install-e2e-agents.sh --latest into DIR/latest-agents/NAME)
#   AGENT...             config names to compare (default: every agent of the pinned config)
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
root=$(cd -- "$script_dir/.." && pwd -P)
out="" acpprobe="" pinned_cfg="" latest_cfg=""
ids=()
while (($# > 0)); do
	case "$1" in
	--out | --acpprobe | --pinned-config | --latest-config)
		if (($# < 2)); then
			echo "e2e-latest: $1 needs a value" >&2
			exit 2
		fi
		case "$1" in
		--out) out=$2 ;;
		--acpprobe) acpprobe=$2 ;;
		--pinned-config) pinned_cfg=$2 ;;
		--latest-config) latest_cfg=$2 ;;
		esac
		shift 2
		;;
	-*)
		echo "e2e-latest: unknown flag $1" >&2
		exit 2
		;;
	*)
		ids+=("$1")
		shift
		;;
	esac
done
budget=${E2E_LATEST_BUDGET:-20m}
scenarios=completion,permission,cancel
# The probes' own budgets: a real agent's first start can take seconds, and several run at once.
read -r -a budgets <<<"${E2E_LATEST_FLAGS:---timeout 2m --startup-timeout 90s --request-timeout 20s}"

for tool in node timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "e2e-latest: $tool is not on PATH" >&2
		exit 2
	fi
done
if [[ -z "$out" ]]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/acpprobe-e2e-latest.XXXXXX")
fi
mkdir -p "$out"
out=$(cd -- "$out" && pwd -P)
echo "e2e-latest: results in $out"

if [[ -z "$acpprobe" ]]; then
	acpprobe="$out/acpprobe"
	(cd "$root" && CGO_ENABLED=0 go build -buildvcs=false -o "$acpprobe" ./cmd/acpprobe)
fi

# json FILE EXPR… prints what the node expression EXPR makes of the JSON document d read from
# FILE (one value a line; nothing when FILE is not JSON).
json() {
	node -e '
		let d;
		try { d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); } catch (e) { process.exit(0); }
		for (const v of [].concat(eval(process.argv[2]))) if (v !== undefined && v !== null) console.log(v);
	' "$@"
}

if [[ -z "$pinned_cfg" ]]; then
	"$root/scripts/install-e2e-agents.sh" >"$out/install-pinned.log" 2>&1 || {
		cat "$out/install-pinned.log" >&2
		echo "e2e-latest: the pinned agents could not be installed" >&2
		exit 2
	}
	pinned_cfg="$root/e2e/.agents/agents.json"
fi
if ((${#ids[@]} == 0)); then
	mapfile -t ids < <(json "$pinned_cfg" 'Object.keys(d.agents)')
fi
if ((${#ids[@]} == 0)); then
	echo "e2e-latest: $pinned_cfg names no agent" >&2
	exit 2
fi

report=() # what changed: printed, never a failure
fails=()  # acpprobe failing on the latest agents
warns=()  # the same on the pinned agents

# The latest of each agent, each in a prefix of its own, so that one package that does not
# install (or drags in a conflicting dependency) leaves the others compared.
if [[ -z "$latest_cfg" ]]; then
	rows=()
	mkdir -p "$out/latest-agents"
	for id in "${ids[@]}"; do
		prefix="$out/latest-agents/$id"
		if "$root/scripts/install-e2e-agents.sh" --latest --only "$id" --dest "$prefix" >"$prefix.log" 2>&1; then
			rows+=("$prefix/agents.json")
			report+=("$id: latest installed: $(grep -m1 "^  $id: " "$prefix.log" | sed -e "s/^  $id: //" -e 's/: .*//')")
		else
			report+=("$id: the latest does not install (see $prefix.log): $(tail -n 3 "$prefix.log" | tr '\n' ' ')")
		fi
	done
	latest_cfg="$out/latest-agents/agents.json"
	node -e '
		const fs = require("fs"); const agents = {};
		for (const f of process.argv.slice(2)) Object.assign(agents, JSON.parse(fs.readFileSync(f, "utf8")).agents);
		fs.writeFileSync(process.argv[1], JSON.stringify({agents}, null, 2) + "\n");
	' "$latest_cfg" "${rows[@]}"
fi
mapfile -t latest_ids < <(json "$latest_cfg" 'Object.keys(d.agents).filter(k => process.argv[3].split(" ").includes(k))' "${ids[*]}")

# problem SIDE TEXT records a failure of acpprobe: on the latest agents it fails the run, on
# the pinned ones it is a warning.
problem() {
	if [[ "$1" == latest ]]; then fails+=("latest: $2"); else warns+=("pinned: $2"); fi
}

# run_matrix SIDE KIND CONFIG IDS… runs `acpprobe matrix` (KIND check: the plain check; turns:
# --turns on the scenarios) on the config's agents into $out/SIDE/KIND and judges acpprobe's
# own part of the outcome.
run_matrix() {
	local side=$1 kind=$2 cfg=$3 dir="$out/$1/$2" rc=0
	shift 3
	local args=(matrix "${budgets[@]}" --config "$cfg" --out "$dir" --format json)
	if [[ "$kind" == turns ]]; then args+=(--turns --scenario "$scenarios"); fi
	rm -rf "$dir"
	mkdir -p "$(dirname "$dir")"
	echo "e2e-latest: $side $kind: acpprobe ${args[*]} $*"
	timeout -k 30s "$budget" "$acpprobe" "${args[@]}" "$@" >"$dir.json" 2>"$dir.stderr" || rc=$?
	case "$rc" in
	0 | 3) ;; # a matrix: at least one agent probed, or none could be (each row says why)
	124) problem "$side" "acpprobe matrix ($kind) ran past its budget of $budget (E2E_LATEST_BUDGET)" ;;
	137) problem "$side" "acpprobe matrix ($kind) was killed (SIGKILL), by timeout after its budget of $budget or by something else" ;;
	*)
		if ((rc > 128)); then
			problem "$side" "acpprobe matrix ($kind) was killed by signal $((rc - 128)): $(tail -n 5 "$dir.stderr" | tr '\n' ' ')"
		else
			problem "$side" "acpprobe matrix ($kind) exited with status $rc: $(tail -n 5 "$dir.stderr" | tr '\n' ' ')"
		fi
		;;
	esac
	if grep -q -e '^panic: ' -e '^fatal error: ' "$dir.stderr"; then
		problem "$side" "acpprobe matrix ($kind) crashed: $(grep -m1 -e '^panic: ' -e '^fatal error: ' "$dir.stderr")"
	fi
	if [[ "$rc" == 0 || "$rc" == 3 ]]; then
		if [[ "$(json "$dir.json" 'd.agents.length')" != "$#" ]]; then
			problem "$side" "acpprobe matrix ($kind) printed no matrix of $# agents (see $dir.json)"
		fi
	fi
	if [[ "$kind" == turns ]]; then
		# A scenario not run for want of a route (none found, or the one taken never reached
		# the emulator) on an agent with a backend profile: acpprobe's profile is out of date.
		local line
		while IFS= read -r line; do
			problem "$side" "$line"
		done < <(json "$dir.json" 'd.agents.flatMap(a => ((a.result || {}).turns || [])
			.filter(t => t.outcome === "not-run" && /did not take|no route|no backend profile/.test(t.reason || "")
				&& ((a.result.route || {}).kind === "profile" || process.argv[3].split(" ").includes(a.id)))
			.map(t => a.id + ": " + t.scenario + " not run: " + t.reason))' "${profiled[*]:-}")
	fi
}

# The agents with a backend profile: those the pinned turn matrix routed by one (computed after
# it ran; the latest are judged against it too, so a latest whose profile no longer matches
# still counts).
profiled=()
for side in pinned latest; do
	if [[ "$side" == pinned ]]; then cfg=$pinned_cfg sel=("${ids[@]}"); else cfg=$latest_cfg sel=("${latest_ids[@]}"); fi
	if ((${#sel[@]} == 0)); then
		report+=("$side: no agent to probe")
		continue
	fi
	run_matrix "$side" check "$cfg" "${sel[@]}"
	run_matrix "$side" turns "$cfg" "${sel[@]}"
	if [[ "$side" == pinned ]]; then
		mapfile -t profiled < <(json "$out/pinned/turns.json" 'd.agents.filter(a => ((a.result || {}).route || {}).kind === "profile").map(a => a.id)')
	fi
done

# What changed: acpprobe diff of each matrix, pinned against latest. The install paths differ
# (agent), and so does the loopback URL of each run's emulator, in a route's variables and as
# the base URL of a gateway login (acpprobe diff does not ignore those yet).
for kind in check turns; do
	old="$out/pinned/$kind.json" new="$out/latest/$kind.json"
	if [[ ! -s "$old" || ! -s "$new" ]]; then
		continue
	fi
	rc=0
	"$acpprobe" diff --ignore agent --ignore 'route.env[*].value' --ignore route.gateway "$old" "$new" >"$out/diff-$kind.txt" 2>&1 || rc=$?
	case "$rc" in
	0) report+=("$kind: no drift") ;;
	1) report+=("$kind: $(cat "$out/diff-$kind.txt")") ;;
	*) fails+=("acpprobe diff ($kind) exited with status $rc: $(tail -n 5 "$out/diff-$kind.txt" | tr '\n' ' ')") ;;
	esac
done

echo
echo "e2e-latest: pinned ($pinned_cfg) against latest ($latest_cfg), results in $out:"
for line in "${report[@]}"; do
	printf '  %s\n' "$line"
done
for line in "${warns[@]}"; do
	printf 'e2e-latest: warning: %s\n' "$line"
done
if ((${#fails[@]} > 0)); then
	for line in "${fails[@]}"; do
		printf 'e2e-latest: FAIL: %s\n' "$line" >&2
	done
	exit 1
fi
echo "e2e-latest: ok (acpprobe ran on every latest agent; what changed is above)"
