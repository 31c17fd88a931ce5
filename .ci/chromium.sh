#!/usr/bin/env bash
# Prepares what the web UI's browser test (e2e/ui_test.go) needs: a
# headless Chromium, Debian's chromium package. Idempotent: installs it only
# when no chromium is on PATH. Without root (or when the install fails) it
# warns and exits 0, so the test skips with the reason; under CI=true it
# fails instead.
set -uo pipefail

warn() { echo "chromium.sh: $*" >&2; }
# give_up ends the script after a warning: outside CI the UI test then skips
# with the reason; in CI (CI=true) every capability must be present, so it
# fails the run instead.
give_up() {
	if [ "${CI:-}" = true ]; then
		echo "chromium.sh: CI needs a headless Chromium to test the web UI; failing" >&2
		exit 1
	fi
	exit 0
}

find_chromium() {
	for name in chromium chromium-browser google-chrome google-chrome-stable; do
		if command -v "$name" >/dev/null 2>&1; then
			command -v "$name"
			return 0
		fi
	done
	return 1
}

if ! bin=$(find_chromium); then
	if [ "$(id -u)" != 0 ]; then
		warn "no chromium and not root: not installing it; the web UI's browser test will skip"
		give_up
	fi
	echo "chromium.sh: installing chromium"
	export DEBIAN_FRONTEND=noninteractive
	if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
		warn "apt-get install chromium failed; the web UI's browser test will skip"
		give_up
	fi
	if ! bin=$(find_chromium); then
		warn "chromium installed but not on PATH; the web UI's browser test will skip"
		give_up
	fi
fi

# A browser that cannot start headless here (missing libraries, no /dev/shm)
# is as good as none: say so now rather than in the test.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
if ! out=$(timeout 60 "$bin" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
	--disable-background-networking --disable-component-update --disable-sync --no-first-run \
	--user-data-dir="$profile" --dump-dom 'data:text/html,<p>ok</p>' 2>&1); then
	warn "$bin does not start headless: $(echo "$out" | tail -n 3)"
	give_up
fi
echo "chromium.sh: $("$bin" --version 2>/dev/null || echo "$bin") ready"
exit 0
