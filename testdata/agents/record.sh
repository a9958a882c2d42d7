#!/usr/bin/env bash
# record.sh records one run of acpprobe against a real agent into testdata/agents/<dir>/, the
# way every transcript there was made (README.md beside this file): a throwaway HOME and working
# directory, an environment holding nothing but PATH, LANG and the agents' home variables, and
# every variable that could give model access set to the empty string (e2e's clearedVars).
#
#   testdata/agents/record.sh [-e KEY=VALUE]... [-s SUFFIX] [-c SCENARIOS] check|check-turns|turn DIR -- AGENT [ARGS...]
#
# check runs `acpprobe check --json --prompt-shapes --deep`; check-turns runs `acpprobe check
# --json --prompt-shapes --turns --scenario completion,prompt-shapes` (the active checks on the
# session the backend profile opens at the emulator: an agent that needs a login gets one);
# turn runs `acpprobe turn --json
# --mcp` with every scenario (-c: only these, a comma list), offline against the model emulator. It writes DIR/MODE[-SUFFIX]
# .ndjson (the transcript, redacted), .result.json (what acpprobe printed on stdout), .exit (its
# exit code) and .result.txt (`acpprobe analyze` of the transcript: the text report the same run
# prints without --json). -e adds a variable to the environment acpprobe and the agent start
# with. ACPPROBE names the acpprobe binary (default: acpprobe on PATH).
set -euo pipefail

extra=()
suffix=""
scenarios=""
while getopts "e:s:c:" opt; do
	case $opt in
	e) extra+=("$OPTARG") ;;
	s) suffix="-$OPTARG" ;;
	c) scenarios=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if (($# < 4)) || [[ $3 != -- ]]; then
	echo "usage: $0 [-e KEY=VALUE]... [-s SUFFIX] [-c SCENARIOS] check|check-turns|turn DIR -- AGENT [ARGS...]" >&2
	exit 2
fi
mode=$1 dir=$2
shift 3
acpprobe=$(command -v "${ACPPROBE:-acpprobe}")
case $mode in
check) flags=(check --json --prompt-shapes --deep) ;;
check-turns) flags=(check --json --prompt-shapes --turns --scenario completion,prompt-shapes) ;;
turn)
	flags=(turn --json --mcp --scenario completion,prompt-shapes,model-truth,permission,cancel,sessions,mcp)
	[[ -z $scenarios ]] || flags=(turn --json --scenario "$scenarios")
	;;
*)
	echo "$0: mode $mode: want check, check-turns or turn" >&2
	exit 2
	;;
esac

mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
out="$dir/$mode$suffix"
box=$(mktemp -d /tmp/acpprobe-record.XXXXXX)
trap 'rm -rf "$box"' EXIT
home="$box/home"
mkdir -p "$home/.codex" "$box/cwd"

# The variables e2e/e2e_test.go clears (clearedVars), as empty strings.
cleared=(ANTHROPIC_API_KEY OPENAI_API_KEY CODEX_API_KEY GEMINI_API_KEY GOOGLE_API_KEY
	GOOGLE_APPLICATION_CREDENTIALS ANTHROPIC_AUTH_TOKEN CLAUDE_CODE_OAUTH_TOKEN
	CLAUDE_CODE_USE_BEDROCK CLAUDE_CODE_USE_VERTEX GOOGLE_GENAI_USE_VERTEXAI GOOGLE_GENAI_USE_GCA
	GOOGLE_CLOUD_PROJECT IS_SANDBOX CLAUDE_CODE_BUBBLEWRAP)
env=(PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 "HOME=$home"
	"XDG_CONFIG_HOME=$home/.config" "XDG_DATA_HOME=$home/.local/share"
	"XDG_STATE_HOME=$home/.local/state" "XDG_CACHE_HOME=$home/.cache"
	"CODEX_HOME=$home/.codex" "CLAUDE_CONFIG_DIR=$home/.claude" "GEMINI_CLI_HOME=$home")
for k in "${cleared[@]}"; do env+=("$k="); done
env+=(${extra[@]+"${extra[@]}"})

code=0
(cd "$box/cwd" && env -i "${env[@]}" "$acpprobe" "${flags[@]}" --transcript "$out.ndjson" -- "$@") \
	>"$out.result.json" || code=$?
echo "$code" >"$out.exit"
tcode=0
"$acpprobe" analyze "$out.ndjson" >"$out.result.txt" || tcode=$?
if [[ $tcode != "$code" ]]; then
	echo "$0: analyze exited $tcode, the recorded run $code" >&2
	exit 1
fi
echo "$0: $out.* (exit $code)"
