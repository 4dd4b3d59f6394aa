#!/bin/sh
# knockgw's Debian package under a real systemd: a container booted with
# systemd-nspawn from an overlay of this machine's / (tests/systemd/lib.sh),
# driven with systemctl, and probed over a veth from a network namespace of
# the test.  The scenarios (tests/systemd/NN-*.sh, in order): install the
# package, enable and start, reload, key rotation, restart under a SYN
# flood, the watchdog, stop, the metrics timer, reboots with a good, a
# broken configuration and a broken key file, purge.
#   1. builds the package (make deb, without its build-time tests), unless
#      KGW_DEB names one to test;
#   2. runs tests/systemd/suite.sh in a mount namespace of its own, so that
#      the container's overlay and tmpfs never show outside it and go with
#      it, whatever happens;
#   3. checks that no systemd-nspawn the suite started is left.
# Prints "ok"/"not ok" lines, the run time and "run.sh: N passed, N
# failed".  Skips (with the reason, exit 0) only where systemd-nspawn
# cannot run: not root, no systemd-nspawn (make deps installs
# systemd-container), no overlayfs, no mount namespace.
#   BUILD    build directory (default: build): the package goes to BUILD/deb
#   KGW_DEB  a package to test instead of building one
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
export BUILD
start=$(date +%s)

skip() {
	echo "# SKIP: $*"
	echo "run.sh: 0 passed, 0 failed"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "systemd-nspawn needs root"
command -v systemd-nspawn >/dev/null 2>&1 ||
	skip "no systemd-nspawn (Debian package systemd-container; make deps installs it)"
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip "this kernel has no overlayfs for the container's root"
grep -qw overlay /proc/filesystems || skip "this kernel has no overlayfs for the container's root"
unshare --mount --propagation slave true 2>/dev/null || skip "no mount namespace can be made"

if [ -n "${KGW_DEB:-}" ]; then
	DEB=$KGW_DEB
	echo "# testing $DEB"
else
	DEB=$BUILD/deb/knockgw_$(cat VERSION)_$(dpkg-architecture -qDEB_HOST_ARCH).deb
	log=$(mktemp)
	if ! DEB_BUILD_OPTIONS=nocheck make --no-print-directory BUILD="$BUILD" deb >"$log" 2>&1; then
		echo "not ok - make deb"
		tail -n 30 "$log" | sed 's/^/# /'
		rm -f "$log"
		echo "run.sh: 0 passed, 1 failed"
		exit 1
	fi
	rm -f "$log"
	echo "# built $DEB"
fi
DEB=$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")

pids=$(mktemp)
unshare --mount --propagation slave \
	env KGW_SUITE_MNTNS="$(readlink /proc/self/ns/mnt)" KGW_SUITE_PIDS="$pids" \
	sh tests/systemd/suite.sh "$DEB"
rc=$?
# Each systemd-nspawn the suite started (lib.sh writes their pids there).
left=""
while read -r p; do
	case $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") in
	systemd-nspawn*) left="$left $p" ;;
	esac
done <"$pids"
rm -f "$pids"
if [ -n "$left" ]; then
	echo "not ok - a systemd-nspawn of the suite is left:$left"
	rc=1
fi
echo "# tests/systemd: $(($(date +%s) - start)) s"
exit $rc
