#!/usr/bin/env bash
# The project's test command (README.md): formatting, vet, the race-enabled test suite (and the
# one bound measured without the race detector), and a
# short run of every fuzz target (a number of executions each, below). FUZZTIME=0 skips
# fuzzing; FUZZTIME=30s (or 100000x) gives every target that budget instead.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(find . -name '*.go' -not -path './e2e/.agents/*' -not -path './node_modules/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 ./...

# The memory bounds a test can only measure on the plain build (the race detector's shadow
# memory is several times the heap), and that it skips under -race: run here without it.
echo "== go test (bounds measured without the race detector)"
go test -count=1 -run '^TestTurnHugeAnswersWithinBudget$' ./internal/cli/

# Fuzzing: each target gets a number of executions, not a time. A time budget counted the
# start of the workers and the replay of the corpus, so on a busy 2-core machine a target could
# end after a handful of inputs; a count is the same work everywhere. A count includes the
# replay of the corpus (the seeds and what earlier runs found, kept in $GOCACHE/fuzz), so each
# is far above that. FUZZTIME=0 skips fuzzing; FUZZTIME=30s or FUZZTIME=100000x gives every
# target that budget instead. Each target prints the executions it ran and how long it took.
fuzz_budget() { # pkg target -> -fuzztime
	case "$1 $2" in
	"conformance FuzzInference") echo 20000x ;;  # zod/serde error parsing and inference
	"emulator FuzzMinimal") echo 10000x ;;       # ~150 corpus entries
	"extensions FuzzTake") echo 50000x ;;
	"jsonrpc FuzzLineReader") echo 30000x ;;
	"jsonrpc FuzzDecode") echo 50000x ;;
	"jsonrpc FuzzIDKey") echo 30000x ;;
	"jsonrpc FuzzConn") echo 20000x ;;           # a whole connection per input
	"jsonrpc FuzzDecodeFastPath") echo 50000x ;;
	"probe FuzzAgentOutput") echo 10000x ;;      # the engine against arbitrary agent output
	"transcript FuzzRead") echo 20000x ;;
	"transcript FuzzReplayer") echo 20000x ;;
	"transcript FuzzRedactPrefilters") echo 30000x ;; # the redactor's prefilters against its patterns
	*) echo 10000x ;;                            # a new target: give it its own line above
	esac
}
if [ "${FUZZTIME:-}" != "0" ]; then
	echo "== fuzz (${FUZZTIME:-executions per target})"
	fuzz_start=$SECONDS
	# The targets, read from the sources (listing them with go test -list would build every
	# test binary once more).
	targets=$(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . |
		grep -v -e '^./e2e/.agents/' -e '/node_modules/' | sed 's|^\./||; s|/[^/]*:func | |; s|^[^ /]*_test.go:func |. |' | sort)
	while read -r dir target; do
		budget=${FUZZTIME:-$(fuzz_budget "$dir" "$target")}
		start=$SECONDS
		if ! out=$(go test "./$dir" -run '^$' -fuzz "^${target}\$" -fuzztime "$budget" 2>&1); then
			echo "$out"
			echo "-- $dir $target: FAILED"
			exit 1
		fi
		execs=$(echo "$out" | grep -o 'execs: [0-9]*' | tail -1 | grep -o '[0-9]*' || true)
		corpus=$(echo "$out" | grep -o 'baseline coverage: [0-9]*/[0-9]*' | tail -1 | grep -o '[0-9]*$' || true)
		echo "-- $dir $target: ${execs:-0} execs (budget $budget, corpus ${corpus:-?}) in $((SECONDS - start))s"
	done <<<"$targets"
	echo "-- fuzzing took $((SECONDS - fuzz_start))s"
fi
echo "== all green"
