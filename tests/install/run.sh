#!/bin/sh
# make install / make uninstall into a scratch DESTDIR: every file with its
# mode, the unit's paths, a config that survives a reinstall, an uninstall
# that keeps the config and keys, and man pages that render cleanly.
# Prints "ok"/"not ok" lines and "NAME: N passed, N failed"; exits 1 on a failure.
#   BUILD   build directory (default: build), passed to make
# Needs no root and touches nothing outside its temporary directory.
# sh -c '...' sh ARGS: the single quotes are meant (SC2016).
# shellcheck disable=SC2016
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
D=$tmp/root
log=$tmp/make.log

# ok, not_ok, check, finish
. tests/netns/lib/base.sh

# mode PATH OCTAL TYPE: exists as TYPE (f or d) with exactly that mode.
mode() {
	if [ "$3" = d ]; then [ -d "$1" ] && [ ! -L "$1" ]; else [ -f "$1" ] && [ ! -L "$1" ]; fi &&
		[ "$(stat -c %a "$1")" = "$2" ]
}

run_make() {
	if make --no-print-directory BUILD="$BUILD" "$@" >"$log" 2>&1; then
		return 0
	fi
	sed 's/^/# /' "$log"
	return 1
}

# The first word of each Exec*= line whose command is knockgw.
unit_knockgw_paths() {
	sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*knockgw\)\( .*\)\{0,1\}$/\1/p' "$1"
}

# unit_points UNIT PREFIX ROOT: every knockgw Exec path is PREFIX/sbin/knockgw
# and that file is the installed, executable binary under ROOT.
unit_points() {
	paths=$(unit_knockgw_paths "$1")
	[ -n "$paths" ] || return 1
	for p in $paths; do
		[ "$p" = "$2/sbin/knockgw" ] && [ -x "$3$p" ] || return 1
	done
}

PREFIX=/usr
SYSCONF=$D/etc/knockgw
UNIT=$D/lib/systemd/system/knockgw.service
MAN=$D$PREFIX/share/man
MANPAGES="man8/knockgw.8 man5/knockgw.conf.5 man1/knock-connect.1"
BASHCOMP=$D$PREFIX/share/bash-completion/completions

# --- first install ------------------------------------------------------
check "make install DESTDIR=..." run_make install DESTDIR="$D"
check "sbin/knockgw 0755" mode "$D$PREFIX/sbin/knockgw" 755 f
check "bin/knock-connect 0755" mode "$D$PREFIX/bin/knock-connect" 755 f
check "knockgw.service 0644" mode "$UNIT" 644 f
MUNIT=$D/lib/systemd/system/knockgw-metrics.service
MTIMER=$D/lib/systemd/system/knockgw-metrics.timer
check "knockgw-metrics.service 0644" mode "$MUNIT" 644 f
check "knockgw-metrics.timer 0644" mode "$MTIMER" 644 f
check "knockgw-metrics.timer is the source timer" cmp -s systemd/knockgw-metrics.timer "$MTIMER"
check "knockgw.conf 0600" mode "$SYSCONF/knockgw.conf" 600 f
check "knockgw.conf is the shipped example" cmp -s conf/knockgw.conf "$SYSCONF/knockgw.conf"
check "keys/ 0700" mode "$SYSCONF/keys" 700 d
for m in $MANPAGES; do
	check "man page $m 0644" mode "$MAN/$m" 644 f
	check "man page $m is man/${m#*/}" cmp -s "man/${m#*/}" "$MAN/$m"
done
for c in knockgw knock-connect; do
	check "bash completion $c 0644" mode "$BASHCOMP/$c" 644 f
	check "bash completion $c is completions/$c" cmp -s "completions/$c" "$BASHCOMP/$c"
done
check "installed knockgw --version is the VERSION file's" \
	sh -c '[ "$("$1" --version)" = "knockgw $(cat VERSION)" ]' sh "$D$PREFIX/sbin/knockgw"
check "installed binaries are the built ones" \
	sh -c 'cmp -s "$1/knockgw" "$2/sbin/knockgw" && cmp -s "$1/knock-connect" "$2/bin/knock-connect"' \
	sh "$BUILD" "$D$PREFIX"
check "unit: ExecStart/ExecStartPre run $PREFIX/sbin/knockgw, which is installed" \
	unit_points "$UNIT" "$PREFIX" "$D"
check "unit: everything but the knockgw paths is the source unit" \
	sh -c 'sed "s|$2/sbin/knockgw|/usr/sbin/knockgw|g" "$1" | cmp -s - systemd/knockgw.service' \
	sh "$UNIT" "$PREFIX"
check "metrics unit: ExecStart runs $PREFIX/sbin/knockgw, which is installed" \
	unit_points "$MUNIT" "$PREFIX" "$D"
check "metrics unit: everything but the knockgw path is the source unit" \
	sh -c 'sed "s|$2/sbin/knockgw|/usr/sbin/knockgw|g" "$1" | cmp -s - systemd/knockgw-metrics.service' \
	sh "$MUNIT" "$PREFIX"
check "install enables nothing (no .wants link)" sh -c '[ -z "$(find "$1" -name "*.wants")" ]' sh "$D"
check "installed knockgw -n accepts the installed config" \
	sh -c '"$1" -n -c "$2" >/dev/null 2>&1' sh "$D$PREFIX/sbin/knockgw" "$SYSCONF/knockgw.conf"

# --- reinstall over an edited config and a key --------------------------
echo "# edited by the administrator" >>"$SYSCONF/knockgw.conf"
cp "$SYSCONF/knockgw.conf" "$tmp/edited.conf"
(umask 077 && "$D$PREFIX/sbin/knockgw" genkey >"$SYSCONF/keys/alice.key")
cp "$SYSCONF/keys/alice.key" "$tmp/alice.key"
check "second make install" run_make install DESTDIR="$D"
check "second install keeps the edited config" cmp -s "$tmp/edited.conf" "$SYSCONF/knockgw.conf"
check "edited config keeps mode 0600" mode "$SYSCONF/knockgw.conf" 600 f
check "the new example goes to knockgw.conf.new, 0600" mode "$SYSCONF/knockgw.conf.new" 600 f
check "knockgw.conf.new is the shipped example" cmp -s conf/knockgw.conf "$SYSCONF/knockgw.conf.new"
check "second install says it kept the config" grep -q "knockgw.conf.new" "$log"
check "second install keeps the key" cmp -s "$tmp/alice.key" "$SYSCONF/keys/alice.key"
check "keys/ still 0700" mode "$SYSCONF/keys" 700 d

# --- uninstall ----------------------------------------------------------
check "make uninstall DESTDIR=..." run_make uninstall DESTDIR="$D"
check "uninstall removes sbin/knockgw" test ! -e "$D$PREFIX/sbin/knockgw"
check "uninstall removes bin/knock-connect" test ! -e "$D$PREFIX/bin/knock-connect"
check "uninstall removes the unit" test ! -e "$UNIT"
check "uninstall removes knockgw-metrics.service" test ! -e "$MUNIT"
check "uninstall removes knockgw-metrics.timer" test ! -e "$MTIMER"
for m in $MANPAGES; do
	check "uninstall removes $m" test ! -e "$MAN/$m"
done
for c in knockgw knock-connect; do
	check "uninstall removes the bash completion $c" test ! -e "$BASHCOMP/$c"
done
check "uninstall keeps the config" cmp -s "$tmp/edited.conf" "$SYSCONF/knockgw.conf"
check "uninstall keeps knockgw.conf.new" test -f "$SYSCONF/knockgw.conf.new"
check "uninstall keeps the keys" cmp -s "$tmp/alice.key" "$SYSCONF/keys/alice.key"
check "uninstall says it kept the config and keys" grep -q "kept" "$log"

# --- another PREFIX: the unit follows it --------------------------------
D2=$tmp/root2
check "make install PREFIX=/usr/local SYSCONFDIR=/etc" \
	run_make install DESTDIR="$D2" PREFIX=/usr/local
check "PREFIX=/usr/local: sbin/knockgw 0755" mode "$D2/usr/local/sbin/knockgw" 755 f
check "PREFIX=/usr/local: man page under share/man" \
	mode "$D2/usr/local/share/man/man8/knockgw.8" 644 f
check "PREFIX=/usr/local: bash completion under share/bash-completion" \
	mode "$D2/usr/local/share/bash-completion/completions/knockgw" 644 f
check "PREFIX=/usr/local: unit runs /usr/local/sbin/knockgw" \
	unit_points "$D2/lib/systemd/system/knockgw.service" /usr/local "$D2"
check "PREFIX=/usr/local: no /usr/sbin path left in the unit" \
	sh -c '! grep -q "=/usr/sbin/" "$1"' sh "$D2/lib/systemd/system/knockgw.service"
check "PREFIX=/usr/local: metrics unit runs /usr/local/sbin/knockgw" \
	unit_points "$D2/lib/systemd/system/knockgw-metrics.service" /usr/local "$D2"

# --- the man pages render without a warning -----------------------------
for m in man/*.[1-8]; do
	if command -v man >/dev/null 2>&1; then
		check "man --warnings: $m" sh -c '[ -z "$(man --warnings -l "$1" 2>&1 >/dev/null)" ]' sh "$m"
	fi
	if command -v mandoc >/dev/null 2>&1; then
		check "mandoc -Tlint: $m" sh -c '[ -z "$(mandoc -Tlint "$1" 2>&1)" ]' sh "$m"
	fi
done
command -v man >/dev/null 2>&1 || echo "# man (man-db) not installed: man pages not rendered"

finish
