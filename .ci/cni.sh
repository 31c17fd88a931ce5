#!/usr/bin/env bash
# Installs what bridge networking (network { mode = "bridge" }) needs: the
# standard CNI plugins (Debian's containernetworking-plugins, in
# /usr/lib/cni, which the agent uses when /opt/cni/bin has none) and
# iptables. Idempotent: installs only what is missing. Without root it
# warns and exits 0, so the bridge tests skip with the reason; under
# CI=true it fails instead.
set -uo pipefail

warn() { echo "cni.sh: $*" >&2; }
give_up() {
	if [ "${CI:-}" = true ]; then
		echo "cni.sh: CI needs the CNI plugins; failing" >&2
		exit 1
	fi
	exit 0
}

have() {
	for p in bridge host-local loopback portmap firewall; do
		[ -x "/usr/lib/cni/$p" ] || [ -x "/opt/cni/bin/$p" ] || return 1
	done
	command -v iptables >/dev/null
}

if have; then
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	warn "not root: cannot install containernetworking-plugins"
	give_up
fi
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -q && apt-get install -y -q containernetworking-plugins iptables; }; then
	warn "apt-get install containernetworking-plugins failed"
	give_up
fi
have || { warn "the CNI plugins are still missing after the install"; give_up; }
