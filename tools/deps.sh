#!/bin/sh
# Installs the Debian packages that building, testing and the demo need.
# Does nothing (and needs no root) when they are all present.
set -eu

PKGS="make gcc libc6-dev pkg-config clang libclang-rt-14-dev
libnetfilter-queue-dev libmnl-dev libnftnl-dev libconfig-dev libsodium-dev
libsystemd-dev libnetfilter-conntrack-dev
nftables iptables iproute2 iputils-ping kmod procps ethtool conntrack
openssh-server openssh-client nmap iperf3 socat tcpdump python3 systemd systemd-container man-db mandoc
valgrind gdb bash-completion prometheus
build-essential dpkg-dev debhelper fakeroot lintian"

missing=""
for p in $PKGS; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = "installed" ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: these Debian packages are missing and installing them needs root:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
