#!/usr/bin/env bash
# Starts a dev agent (server + client in one process), runs the hello
# example job, shows its status, then keeps the agent running, with its log
# in the foreground, until Ctrl-C. Called by `make dev` after `make build`.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=./bin/drover
port=${DROVER_HTTP_PORT:-4646}
data_dir=${DROVER_DEV_DATA:-$PWD/dev-data}
log=$data_dir/agent.log
export DROVER_ADDR=http://127.0.0.1:$port

if [ ! -x "$bin" ]; then
  echo "$bin is missing: run 'make build' (or 'make dev') first" >&2
  exit 1
fi
mkdir -p "$data_dir"

agent_pid=""
tail_pid=""
cleanup() {
  trap - EXIT INT TERM
  if [ -n "$agent_pid" ] && kill -0 "$agent_pid" 2>/dev/null; then
    echo "==> Stopping the agent (pid $agent_pid)"
    kill -INT "$agent_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$agent_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
  fi
  if [ -n "$tail_pid" ]; then kill "$tail_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT INT TERM

echo "==> Starting drover agent -dev on $DROVER_ADDR (log: $log)"
# The agent gets its own session so that Ctrl-C reaches only this script,
# whose trap then stops the agent once, gracefully.
launcher=()
if command -v setsid >/dev/null 2>&1; then launcher=(setsid); fi
"${launcher[@]}" "$bin" agent -dev -http-port "$port" -data-dir "$data_dir" >"$log" 2>&1 &
agent_pid=$!

# Wait until the agent answers and knows its leader.
leader_ok() {
  local out
  out=$(curl -sf "$DROVER_ADDR/v1/status/leader" 2>/dev/null) || return 1
  [ -n "$out" ] && [ "$out" != '""' ]
}
for i in $(seq 1 300); do
  if leader_ok; then break; fi
  if ! kill -0 "$agent_pid" 2>/dev/null; then
    echo "The agent exited while starting; its log:" >&2
    cat "$log" >&2
    exit 1
  fi
  if [ "$i" = 300 ]; then
    echo "The agent did not elect a leader within 30s; its log is $log" >&2
    exit 1
  fi
  sleep 0.1
done
echo "==> Agent is up"

echo "==> drover job run examples/hello.nomad.hcl"
"$bin" job run examples/hello.nomad.hcl || echo "(job run exited with $?)"
echo
echo "==> drover job status hello"
"$bin" job status hello || true
echo
echo "==> Try: $bin alloc status <alloc-id>, $bin node status, $bin job stop hello"
echo "==> The agent keeps running; its log follows. Ctrl-C stops it."
tail -n +1 -f "$log" &
tail_pid=$!
wait "$agent_pid" || true
