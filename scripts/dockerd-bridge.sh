#!/usr/bin/env bash
# Starts (or stops) a Docker daemon of one's own with a bridge network, for
# the tests that publish container ports on a machine whose shared daemon
# runs without one (dockerd --bridge=none): it does not touch the shared
# daemon. The daemon gets its own data root, exec root, socket, pid file
# and bridge (with its own subnet), and the test image
# drover-test/busybox:latest copied from the shared daemon. Point the
# tests at it with DROVER_TEST_DOCKER_HOST (printed on start):
#
#   scripts/dockerd-bridge.sh start /tmp/my-dockerd
#   DROVER_TEST_DOCKER_HOST=unix:///tmp/my-dockerd/docker.sock go test -run Ports ./e2e/
#   scripts/dockerd-bridge.sh stop /tmp/my-dockerd
#
# BRIDGE (default drvtest0) and CIDR (default 10.213.7.1/24) choose the
# bridge; IPTABLES=true lets the daemon manage iptables (it does not by
# default, so that a shared machine's firewall is left alone: published
# ports on loopback then go through docker-proxy). Needs root.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
	echo "usage: $0 start|stop DIR" >&2
	exit 2
fi
BRIDGE=${BRIDGE:-drvtest0}
CIDR=${CIDR:-10.213.7.1/24}
IPTABLES=${IPTABLES:-false}
SHARED=${SHARED_DOCKER_HOST:-unix:///var/run/docker.sock}
IMAGE=drover-test/busybox:latest
sock="$dir/docker.sock"

ping_daemon() {
	curl -fsS --max-time 2 --unix-socket "$sock" http://docker/_ping >/dev/null 2>&1
}

case "$cmd" in
start)
	mkdir -p "$dir"
	if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
		ip link add name "$BRIDGE" type bridge
		ip addr add "$CIDR" dev "$BRIDGE"
	fi
	ip link set "$BRIDGE" up
	if ! ping_daemon; then
		# setsid: the daemon outlives this script and is not in its group.
		setsid dockerd --data-root "$dir/data" --exec-root "$dir/exec" -H "unix://$sock" \
			--pidfile "$dir/docker.pid" --bridge "$BRIDGE" --iptables="$IPTABLES" \
			>"$dir/dockerd.log" 2>&1 </dev/null &
		for _ in $(seq 1 120); do
			ping_daemon && break
			sleep 0.5
		done
		if ! ping_daemon; then
			echo "dockerd-bridge.sh: the daemon did not answer on $sock; its log:" >&2
			tail -n 30 "$dir/dockerd.log" >&2
			exit 1
		fi
	fi
	if ! curl -fsS --unix-socket "$sock" "http://docker/images/${IMAGE}/json" >/dev/null 2>&1; then
		docker -H "$SHARED" save "$IMAGE" | docker -H "unix://$sock" load >/dev/null
	fi
	echo "DROVER_TEST_DOCKER_HOST=unix://$sock"
	;;
stop)
	if [ -f "$dir/docker.pid" ]; then
		pid=$(cat "$dir/docker.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 60); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
	fi
	ip link del "$BRIDGE" 2>/dev/null || true
	;;
*)
	echo "usage: $0 start|stop DIR" >&2
	exit 2
	;;
esac
