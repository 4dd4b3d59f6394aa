#!/bin/sh
# The systemd units as `make install` installs them (knockgw.service,
# knockgw-metrics.service and its .timer):
#   1. systemd-analyze verify finds no problem in any;
#   2. systemd-analyze security --offline=yes rates each service's exposure
#      <= 2.5.
# Prints "ok"/"not ok" lines and "NAME: N passed, N failed"; exits 1 on a failure.
#   BUILD           build directory (default: build), passed to make
#   MAX_EXPOSURE    the highest acceptable exposure level (default: 2.5)
#
# Why verify runs on a copy: `systemd-analyze verify --root=DESTDIR` (systemd
# 252) wants a whole systemd tree inside the root (sysinit.target,
# /bin/kill), and verify without a root wants the unit's binaries and man
# pages where the unit says, i.e. installed on this machine.  So it checks a
# temporary copy of the installed unit whose knockgw paths point at the
# binaries installed in DESTDIR (run.sh checks that the real paths match
# PREFIX), with MANPATH set to DESTDIR's man pages for Documentation=.
# Needs no root and touches nothing outside its temporary directory.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
MAX_EXPOSURE=${MAX_EXPOSURE:-2.5}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
D=$tmp/root
PREFIX=/usr

# ok, not_ok, finish
. tests/netns/lib/base.sh

# Prints a file as comment lines (diagnostics under a "not ok").
show() {
	sed 's/^/# /' "$1"
}

if ! command -v systemd-analyze >/dev/null 2>&1; then
	not_ok "systemd-analyze is installed (Debian package systemd)"
	finish
	exit
fi

if make --no-print-directory BUILD="$BUILD" install DESTDIR="$D" >"$tmp/make.log" 2>&1; then
	ok "make install DESTDIR=..."
else
	not_ok "make install DESTDIR=..."
	show "$tmp/make.log"
	finish
	exit
fi
UNITDIR=$D/lib/systemd/system

# --- 1. verify ----------------------------------------------------------
mkdir "$tmp/verify"
for u in knockgw.service knockgw-metrics.service knockgw-metrics.timer; do
	sed "s|=$PREFIX/sbin/knockgw|=$D$PREFIX/sbin/knockgw|g" "$UNITDIR/$u" >"$tmp/verify/$u"
done
man_opt=""
if ! command -v man >/dev/null 2>&1; then
	echo "# man (man-db) not installed: Documentation= not checked"
	man_opt="--man=no"
fi
for u in knockgw.service knockgw-metrics.service knockgw-metrics.timer; do
	# shellcheck disable=SC2086
	if MANPATH=$D$PREFIX/share/man systemd-analyze verify $man_opt "$tmp/verify/$u" \
		>"$tmp/verify.log" 2>&1 && [ ! -s "$tmp/verify.log" ]; then
		ok "systemd-analyze verify $u: no complaint"
	else
		not_ok "systemd-analyze verify $u: no complaint"
		show "$tmp/verify.log"
	fi
done

# --- 2. security --------------------------------------------------------
for u in knockgw.service knockgw-metrics.service; do
	systemd-analyze security --offline=yes "$UNITDIR/$u" >"$tmp/security.log" 2>&1
	level=$(sed -n "s/.*Overall exposure level for $u: \([0-9][0-9.]*\).*/\1/p" \
		"$tmp/security.log" | head -n 1)
	if [ -z "$level" ]; then
		not_ok "systemd-analyze security prints an overall exposure level for $u"
		show "$tmp/security.log"
	elif awk -v l="$level" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(l + 0 <= m + 0) }'; then
		ok "$u: exposure level $level <= $MAX_EXPOSURE"
	else
		not_ok "$u: exposure level $level <= $MAX_EXPOSURE"
		grep '✗' "$tmp/security.log" | sed 's/^/# /'
	fi
done

finish
exit
