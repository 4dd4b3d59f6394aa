#!/bin/sh
# Installs the Debian packages that building, testing and the demo need.
# Does nothing (and needs no root) when they are all present.
#
# Two tools come from packages the tests need nothing else of: promtool
# (package prometheus: the whole server, ~96 MB, which apt may start) and
# fail2ban-regex and fail2ban-client (package fail2ban, whose service apt
# would start).  Where they are not installed already, each package is
# downloaded (apt-get download: no install, no maintainer script, no
# service) and unpacked into DEPS_DIR (default build/deps; make deps passes
# $(BUILD)/deps), with the commands in DEPS_DIR/bin (of prometheus, only
# promtool is kept); tests/netns/lib/lib.sh adds that to PATH.
# python3-systemd is fail2ban's systemd backend (tests/systemd reads the
# journal with it).
set -eu
DEPS_DIR=${DEPS_DIR:-build/deps}

PKGS="make gcc libc6-dev pkg-config clang libclang-rt-14-dev
libnetfilter-queue-dev libmnl-dev libnftnl-dev libconfig-dev libsodium-dev
libsystemd-dev
nftables iptables iproute2 iputils-ping kmod procps ethtool conntrack
openssh-server openssh-client nmap iperf3 socat tcpdump python3 python3-systemd systemd systemd-container man-db mandoc
valgrind gdb bash-completion patch
build-essential dpkg-dev debhelper fakeroot lintian"

# unpack PACKAGE: the package's files into DEPS_DIR/PACKAGE, unless there.
unpack() {
	[ -d "$DEPS_DIR/$1" ] && return 0
	echo "deps: unpacking $1 into $DEPS_DIR/$1 (not installed: no service starts)"
	u_tmp=$(mktemp -d)
	if ! (cd "$u_tmp" && apt-get download -q "$1" >/dev/null 2>&1); then
		if [ "$(id -u)" = 0 ]; then
			apt-get update -qq
			(cd "$u_tmp" && apt-get download -q "$1" >/dev/null)
		else
			echo "deps: cannot download $1 (apt-get update needs root)" >&2
			rm -rf "$u_tmp"
			return 1
		fi
	fi
	mkdir -p "$DEPS_DIR"
	dpkg-deb -x "$u_tmp"/"$1"_*.deb "$u_tmp/root"
	mv "$u_tmp/root" "$DEPS_DIR/$1"
	rm -rf "$u_tmp"
}

tools() {
	mkdir -p "$DEPS_DIR/bin"
	if ! command -v promtool >/dev/null && [ ! -x "$DEPS_DIR/bin/promtool" ]; then
		unpack prometheus
		# promtool alone (~30 MB of the ~96): the rest goes again.
		mv "$DEPS_DIR/prometheus/usr/bin/promtool" "$DEPS_DIR/bin/promtool"
		rm -rf "$DEPS_DIR/prometheus"
	fi
	for t in fail2ban-regex fail2ban-client; do
		command -v "$t" >/dev/null && continue
		[ -x "$DEPS_DIR/bin/$t" ] && continue
		unpack fail2ban
		# Its Python modules from the unpacked tree, not from site-packages.
		d=$(cd "$DEPS_DIR/fail2ban" && pwd)
		printf '#!/bin/sh\nPYTHONPATH=%s/usr/lib/python3/dist-packages exec /usr/bin/python3 %s/usr/bin/%s "$@"\n' \
			"$d" "$d" "$t" >"$DEPS_DIR/bin/$t"
		chmod 755 "$DEPS_DIR/bin/$t"
	done
}

missing=""
for p in $PKGS; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = "installed" ] || missing="$missing $p"
done
if [ -z "$missing" ]; then
	tools
	exit 0
fi

echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: these Debian packages are missing and installing them needs root:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
tools
