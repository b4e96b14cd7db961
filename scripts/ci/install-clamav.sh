#!/usr/bin/env bash
# Installs Debian's clamav-daemon (clamd 1.4.x, DECISIONS.md "Versions") for
# the clamd engine's tests (shared/scan/clamdtest), which start their own clamd
# with a generated configuration and a private signature database.
#
# Only the package's binaries are wanted: the tests never use the package's
# clamav-daemon or clamav-freshclam services, its /etc/clamav configuration or
# its /var/lib/clamav database, and nothing here downloads signatures. So the
# services are kept from starting at install time (policy-rc.d answers 101 =
# "action forbidden" to invoke-rc.d, which the maintainer scripts call) and
# disabled afterwards where systemd runs (they were not running before: the
# package was not installed).
#
# Usage: scripts/ci/install-clamav.sh   (as root; does nothing when clamd is
# already installed at a 1.4 version). Callable from .ci/run.
set -euo pipefail

want_series="1.4."

installed_version() {
	dpkg-query -W -f='${Status} ${Version}\n' clamav-daemon 2>/dev/null |
		awk '$1 == "install" && $3 == "installed" { print $4 }'
}

already_installed() {
	local v
	v="$(installed_version || true)"
	if [[ "$v" == ${want_series}* && -x /usr/sbin/clamd ]]; then
		echo "clamav-daemon $v is installed"
		return 0
	fi
	return 1
}

already_installed && exit 0

if [[ "$(id -u)" != 0 ]]; then
	echo "install-clamav: clamav-daemon ${want_series}x is missing and installing it needs root (apt-get install clamav-daemon)" >&2
	exit 1
fi

# One install at a time: test binaries of several packages may call this at
# once (apt's own locks would make the second fail rather than wait).
exec 9>/var/lock/custody-install-clamav.lock
flock 9
already_installed && exit 0

# Keep the package's services from starting while it installs; restore any
# policy-rc.d that was there before.
policy=/usr/sbin/policy-rc.d
saved=""
if [[ -e "$policy" ]]; then
	saved="$(mktemp)"
	cp -p "$policy" "$saved"
fi
restore() {
	if [[ -n "$saved" ]]; then
		mv -f "$saved" "$policy"
	else
		rm -f "$policy"
	fi
}
trap restore EXIT
printf '#!/bin/sh\nexit 101\n' >"$policy"
chmod 0755 "$policy"

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends clamav-daemon

if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
	systemctl disable --now clamav-daemon.service clamav-daemon.socket clamav-freshclam.service >/dev/null 2>&1 || true
fi

v="$(installed_version)"
if [[ "$v" != ${want_series}* ]]; then
	echo "install-clamav: apt installed clamav-daemon $v, want ${want_series}x (DECISIONS.md \"Versions\")" >&2
	exit 1
fi
echo "clamav-daemon $v installed ($(/usr/sbin/clamd --version))"
