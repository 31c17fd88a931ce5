#!/usr/bin/env bash
# Runs every test with the race detector, as `make test` does after vet.
#
# go test runs packages in import-path order, two at a time on two cores,
# which left the end-to-end package (e2e/, about 6 minutes, mostly waiting
# on the agents it starts) running alone at the end. Here it starts first,
# in the background, beside the other packages; its output is printed once
# the others' is. The packages are compiled with -race once beforehand, so
# that the two `go test` runs do not compile the same packages at once.
#
#   GO            the go command (default go)
#   TEST_TIMEOUT  go test -timeout for each of the two runs (default 40m)
#
# Exits non-zero if a test of either run fails.
set -uo pipefail
cd "$(dirname "$0")/.."

go=${GO:-go}
timeout=${TEST_TIMEOUT:-40m}

"$go" build -race ./... || exit 1

e2e_out=$(mktemp)
trap 'rm -f "$e2e_out"' EXIT
"$go" test -race -timeout "$timeout" ./e2e/ >"$e2e_out" 2>&1 &
e2e_pid=$!

mapfile -t others < <("$go" list ./... | grep -v '/e2e$')
"$go" test -race -timeout "$timeout" "${others[@]}"
others_rc=$?

wait "$e2e_pid"
e2e_rc=$?
cat "$e2e_out"
[ "$others_rc" -eq 0 ] && [ "$e2e_rc" -eq 0 ]
