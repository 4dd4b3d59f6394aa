#!/bin/sh
# The scenarios of tests/systemd against a booted container (lib.sh), in
# the order of their file names: tests/systemd/[0-9][0-9]-*.sh, each
# sourced in this shell, so that each one starts where the one before left
# the container (the package installed, the daemon running or stopped, a
# key, a drop-in) and uses the same helpers and variables:
#   K      the native key file knockgw.conf names (key "alice"), as a test
#          host file; the container's /etc/knockgw/keys/alice.key is a copy
#   DEB    the package under test, as /root/knockgw.deb in the container
# Run by tests/systemd/run.sh, in a mount namespace of its own:
#   tests/systemd/suite.sh PACKAGE.deb
# Prints "ok"/"not ok" lines and "suite.sh: N passed, N failed".
set -u
DEB=$1
# shellcheck source=tests/netns/lib/lib.sh
. "$(dirname "$0")/../netns/lib/lib.sh"
# shellcheck source=tests/systemd/lib.sh
. "$TOP/tests/systemd/lib.sh"
# Each row says what failed; a failed step does not end the suite.
set +e

if [ -z "${KGW_SUITE_MNTNS:-}" ] || [ "$(readlink /proc/self/ns/mnt)" = "$KGW_SUITE_MNTNS" ]; then
	echo "suite.sh: run it through tests/systemd/run.sh (it needs a mount namespace of its own)" >&2
	exit 1
fi
trap 'ct_cleanup; cleanup' EXIT
trap 'exit 1' INT TERM

# ct_conf: the container's /etc/knockgw/knockgw.conf from stdin, mode 0600.
ct_conf() { ct sh -c 'umask 077 && cat >/etc/knockgw/knockgw.conf.new &&
	mv /etc/knockgw/knockgw.conf.new /etc/knockgw/knockgw.conf'; }
# ct_key FILE: the container's /etc/knockgw/keys/alice.key is FILE's
# copy, replaced atomically (as an administrator rotating a key would).
ct_key() { ct sh -c 'umask 077 && cat >/etc/knockgw/keys/.alice.key.new &&
	mv /etc/knockgw/keys/.alice.key.new /etc/knockgw/keys/alice.key' <"$1"; }
# ct_listening PORT: a socket listens on PORT in the container (10 s at most).
ct_listening() { wait_for 10 sh -c "nsenter -t $CT_LEADER -n ss -ltn | grep -q ':$1 '"; }
# shellcheck disable=SC2034 # the scenarios use it
STATE=/var/lib/knockgw/hiding.conf

ip netns add "$NS_C"
ip -n "$NS_C" link set lo up
if ! ct_root; then
	not_ok "an overlay of / as the container's root"
	finish
	exit
fi
cp "$DEB" "$CT_ROOT/root/knockgw.deb"
# knockgw-metrics.service runs only where node_exporter's directory is.
mkdir -p "$CT_ROOT/var/lib/prometheus/node-exporter"
# shellcheck disable=SC2034 # the scenarios use it
K=$(key_file alice)
if ! ct_boot; then
	not_ok "the container boots (systemd-nspawn --boot)"
	finish
	exit
fi
ok "the container boots: systemd $(ct systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p') is running"

for scenario in "$TOP"/tests/systemd/[0-9][0-9]-*.sh; do
	echo "# --- $(basename "$scenario" .sh)"
	t0=$(date +%s)
	# shellcheck source=/dev/null
	. "$scenario"
	echo "# $(basename "$scenario" .sh): $(($(date +%s) - t0)) s"
done
finish
