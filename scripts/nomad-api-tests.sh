#!/usr/bin/env bash
# Runs the test suite of Nomad's Go API module (github.com/hashicorp/nomad/api,
# MPL-2.0, the version pinned in go.mod) against drover: its test harness
# starts `nomad agent -config FILE` for each test, and here `nomad` is drover.
# Called by `make nomad-api-test`; docs/compatibility.md records which tests
# pass and why the others fail.
#
#   NOMAD_API_TESTS    the tests to run, a `go test -run` pattern ('.': all);
#                      default: the core tests (jobs, allocations, nodes,
#                      evaluations, status, namespaces, variables)
#   NOMAD_API_SKIP     tests not to run, a `go test -skip` pattern; default:
#                      TestAcquireLock_MultipleInstances (a timing test of the
#                      module's lock helper that needs no agent and, failing
#                      late on a loaded machine, panics the whole suite)
#   DROVER_BIN         the drover binary to test; default: built from this tree
#   NOMAD_API_TIMEOUT  the suite's time limit (go test -timeout), default 10m
#   NOMAD_API_PARALLEL how many tests run at once (go test -parallel), default 2
#   NOMAD_API_JSON     when set, the events of `go test -json` go to this file
#
# The suite's output (the agents' too) goes to stdout; a summary of the passed,
# failed and skipped tests ends it. Exits non-zero when a test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

go=${GO:-go}
tests=${NOMAD_API_TESTS:-'^(TestJobs_|TestJob_|TestAllocations_|TestAllocation_|TestNodes_|TestNode_|TestNodeStat|TestNodeMeta_|TestNodeIdentity_|TestNodePools_|TestEvaluations_|TestStatus_|TestNamespaces_|TestNamespace_|TestVariables_)'}
skip=${NOMAD_API_SKIP-'^TestAcquireLock_MultipleInstances$'}
timeout=${NOMAD_API_TIMEOUT:-10m}
parallel=${NOMAD_API_PARALLEL:-2}
export CGO_CFLAGS=${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}

work=$(mktemp -d -t drover-nomad-api-XXXXXX)
pgid=""
cleanup() {
  # The harness leaves an agent running when a test fails before it could
  # stop it: every agent runs in the suite's process group, ended here.
  if [ -n "$pgid" ]; then kill -TERM -- "-$pgid" 2>/dev/null || true; fi
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin"
if [ -z "${DROVER_BIN:-}" ]; then
  echo "--- building drover"
  "$go" build -o "$work/bin/drover" ./cmd/drover
  DROVER_BIN="$work/bin/drover"
fi
ln -s "$(realpath "$DROVER_BIN")" "$work/bin/nomad"

version=$("$go" list -m -f '{{.Version}}' github.com/hashicorp/nomad/api)
dir=$("$go" mod download -json "github.com/hashicorp/nomad/api@$version" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "nomad-api-tests: github.com/hashicorp/nomad/api@$version is not in the module cache: run go mod download" >&2
  exit 1
fi
# The module cache is read-only, and the suite writes nothing there either:
# test a copy.
cp -r "$dir" "$work/api"
chmod -R u+w "$work/api"

echo "--- compiling github.com/hashicorp/nomad/api@$version tests"
(cd "$work/api" && GOWORK=off GOFLAGS=-mod=mod "$go" test -c -o "$work/api.test" .)

echo "--- running $tests with drover as nomad ($DROVER_BIN)"
log="$work/suite.log"
status=0
# setsid: the suite and every agent it starts get a process group of their
# own, so that cleanup ends the agents a failed test left behind. Output goes
# to a file, not a pipe that a left-behind agent would hold open.
(
  cd "$work/api"
  PATH="$work/bin:$PATH" exec setsid "$work/api.test" -test.v=test2json -test.run "$tests" -test.skip "$skip" \
    -test.timeout "$timeout" -test.parallel "$parallel" -test.count 1
) >"$log" 2>&1 &
pid=$!
pgid=$pid
wait "$pid" || status=$?
kill -TERM -- "-$pgid" 2>/dev/null || true
pgid=""

"$go" tool test2json -p github.com/hashicorp/nomad/api <"$log" >"$work/suite.json" || true
if [ -n "${NOMAD_API_JSON:-}" ]; then
  cp "$work/suite.json" "$NOMAD_API_JSON"
fi
# -test.v=test2json marks its framing lines with ^V for test2json.
tr -d '\026' <"$log"

summary() {
  local action=$1
  # grep finds nothing when no test had this outcome: not an error.
  { grep -o "\"Action\":\"$action\",\"Package\":\"[^\"]*\",\"Test\":\"[^\"/]*\"" "$work/suite.json" || true; } |
    sed 's/.*"Test":"\([^"]*\)"/\1/' | sort -u
}
passed=$(summary pass)
failed=$(summary fail)
skipped=$(summary skip)
count() { if [ -z "$1" ]; then echo 0; else echo "$1" | wc -l; fi; }
echo
echo "=== nomad api suite: $(count "$passed") passed, $(count "$failed") failed, $(count "$skipped") skipped"
if [ -n "$failed" ]; then
  echo "failed:"
  echo "$failed" | sed 's/^/  /'
fi
exit "$status"
