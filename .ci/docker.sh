#!/usr/bin/env bash
# Prepares what drivers/docker's tests need: a running Docker daemon and the
# local test image drover-test/busybox:latest, built without a registry.
# Idempotent: installs docker.io only when dockerd is missing, starts
# dockerd only when its socket does not answer, builds the image only when
# it is missing. The daemon runs with Docker's defaults: the bridge network
# docker0 and iptables, so that the tests really publish container ports
# (ports = ["http"]) and reach them from the host. A daemon that already
# answers is used as it is; the port publishing tests then need its bridge
# network, or one of their own (scripts/dockerd-bridge.sh, named by
# DROVER_TEST_DOCKER_HOST; docs/networking.md).
# Without root (or when the daemon cannot start) it warns and exits 0, so the
# docker driver's tests skip with the reason; under CI=true it fails instead.
set -uo pipefail

IMAGE=drover-test/busybox:latest
SOCK=/var/run/docker.sock
LOG=${DOCKERD_LOG:-/tmp/dockerd.log}

warn() { echo "docker.sh: $*" >&2; }
# give_up ends the script after a warning: outside CI the docker tests then
# skip with the reason; in CI (CI=true) every capability must be present, so
# it fails the run instead.
give_up() {
	if [ "${CI:-}" = true ]; then
		echo "docker.sh: CI needs a working Docker engine; failing" >&2
		exit 1
	fi
	exit 0
}

if [ "$(id -u)" != 0 ]; then
	warn "not root: not installing or starting dockerd; docker driver tests will skip"
	give_up
fi

export DEBIAN_FRONTEND=noninteractive
need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v curl >/dev/null 2>&1 || need+=(curl)
# The image needs a static busybox: Debian's busybox-static puts it at /bin/busybox.
dpkg -s busybox-static >/dev/null 2>&1 || need+=(busybox-static)
if [ ${#need[@]} -gt 0 ]; then
	echo "docker.sh: installing ${need[*]}"
	apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null || warn "apt-get install ${need[*]} failed"
fi

ping_daemon() {
	curl -fsS --max-time 2 --unix-socket "$SOCK" http://docker/_ping >/dev/null 2>&1
}

if ! ping_daemon; then
	if ! command -v dockerd >/dev/null 2>&1; then
		warn "dockerd not installed; docker driver tests will skip"
		give_up
	fi
	echo "docker.sh: starting dockerd (log: $LOG)"
	# setsid: the daemon outlives this script and is not in its process group.
	setsid dockerd >"$LOG" 2>&1 < /dev/null &
	for _ in $(seq 1 60); do
		ping_daemon && break
		sleep 0.5
	done
	if ! ping_daemon; then
		warn "dockerd did not answer on $SOCK within 30s; last log lines:"
		tail -n 20 "$LOG" >&2
		give_up
	fi
fi

# The image is built with the API over the socket (curl), not the docker
# CLI, which docker.io ships but another install may lack.
if curl -fsS --unix-socket "$SOCK" "http://docker/images/${IMAGE}/json" >/dev/null 2>&1; then
	echo "docker.sh: dockerd running, image $IMAGE present"
	exit 0
fi
bb=/bin/busybox
if ! [ -x "$bb" ]; then
	warn "no /bin/busybox (busybox-static); cannot build $IMAGE"
	give_up
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/tmp" "$root/etc" "$root/proc" "$root/sys" "$root/dev"
cp "$bb" "$root/bin/busybox"
for app in $("$bb" --list); do
	[ "$app" = busybox ] || ln -sf busybox "$root/bin/$app"
done
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'nobody:x:65534:65534:nobody:/:/bin/false' >>"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
echo 'nogroup:x:65534:' >>"$root/etc/group"
repo=${IMAGE%:*}
tag=${IMAGE##*:}
if tar -C "$root" -c . | curl -fsS --unix-socket "$SOCK" -X POST \
	-H 'Content-Type: application/x-tar' --data-binary @- \
	"http://docker/images/create?fromSrc=-&repo=${repo}&tag=${tag}" >/dev/null; then
	echo "docker.sh: built $IMAGE"
else
	warn "importing $IMAGE failed"
	give_up
fi
exit 0
