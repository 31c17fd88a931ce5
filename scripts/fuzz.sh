#!/usr/bin/env bash
# Runs every fuzz target of the repository (each `func FuzzXxx(f *testing.F)`
# in a _test.go file) for a bounded time, one after the other. Called by
# `make fuzz` (FUZZTIME=30s a target) and by `make test` (FUZZTIME=5s).
#
#   FUZZTIME   how long each target runs (go test -fuzztime), default 30s
#
# A failing input is written by go test to the package's testdata/fuzz/
# directory: commit it with the fix, and every later `go test` replays it.
# Exits non-zero if any target fails, after running them all.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-30s}
go=${GO:-go}
# As the Makefile: silence go-nvml's deprecation warnings.
export CGO_CFLAGS=${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}

failed=()
count=0
start=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Each line: the package directory and a target name.
targets=$( (git ls-files -z '*_test.go' | xargs -0 grep -Ho '^func Fuzz[A-Za-z0-9_]*' || true) |
  sed -E -e 's#^#./#' -e 's#/[^/]*_test\.go:func # #' | sort)
while read -r dir name; do
  [ -n "$name" ] || continue
  count=$((count + 1))
  echo "--- $name ($dir, $fuzztime)"
  corpus="$dir/testdata/fuzz/$name"
  before=$( (ls "$corpus" 2>/dev/null || true) | wc -l)
  if ! "$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$dir" >"$log" 2>&1; then
    after=$( (ls "$corpus" 2>/dev/null || true) | wc -l)
    # Go 1.26's fuzz coordinator can report its own -fuzztime deadline as
    # a failure ("context deadline exceeded", no failing input written:
    # golang/go#75804, fixed in Go 1.27). Only a written input is a failure.
    if [ "$after" -eq "$before" ] && tail -n 5 "$log" | grep -q 'context deadline exceeded'; then
      echo "    (ignored: the fuzzing engine's own deadline, golang/go#75804; no failing input was written)"
      continue
    fi
    tail -n 40 "$log"
    failed+=("$name ($dir)")
  fi
done <<<"$targets"

echo "ran $count fuzz targets in $((SECONDS - start))s"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
