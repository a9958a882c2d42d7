#!/usr/bin/env bash
# The project's test command (README.md): formatting, vet, the race-enabled test suite, and a
# short run of every fuzz target. FUZZTIME=0 skips fuzzing; FUZZTIME=30s fuzzes longer.
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

fuzztime=${FUZZTIME:-5s}
if [ "$fuzztime" != "0" ]; then
	echo "== fuzz ($fuzztime each)"
	for pkg in $(go list ./...); do
		for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
			echo "-- $pkg $target"
			go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime"
		done
	done
fi
echo "== all green"
