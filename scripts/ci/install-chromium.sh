#!/usr/bin/env bash
# Installs Debian's chromium (156, DECISIONS.md "Versions") for the approval
# page's real-browser tests (shared/approvals/browsertest), which start it
# headless through chromedp with a fresh profile of their own.
#
# Only the browser binary is wanted: no driver (chromedp speaks the DevTools
# protocol itself), no fonts beyond what the package pulls in, no services.
#
# Usage: scripts/ci/install-chromium.sh   (as root; does nothing when
# /usr/bin/chromium is already installed at a 156 version). Callable from
# .ci/run.
set -euo pipefail

want_series="156."

installed_version() {
	dpkg-query -W -f='${Status} ${Version}\n' chromium 2>/dev/null |
		awk '$1 == "install" && $3 == "installed" { print $4 }'
}

already_installed() {
	local v
	v="$(installed_version || true)"
	if [[ "$v" == ${want_series}* && -x /usr/bin/chromium ]]; then
		echo "chromium $v is installed"
		return 0
	fi
	return 1
}

already_installed && exit 0

if [[ "$(id -u)" != 0 ]]; then
	echo "install-chromium: chromium ${want_series}x is missing and installing it needs root (apt-get install chromium)" >&2
	exit 1
fi

# One install at a time: test binaries of several packages may call this at
# once (apt's own locks would make the second fail rather than wait).
exec 9>/var/lock/custody-install-chromium.lock
flock 9
already_installed && exit 0

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium

v="$(installed_version)"
if [[ "$v" != ${want_series}* ]]; then
	echo "install-chromium: apt installed chromium $v, want ${want_series}x (DECISIONS.md \"Versions\")" >&2
	exit 1
fi
echo "chromium $v installed ($(/usr/bin/chromium --version 2>/dev/null || true))"
