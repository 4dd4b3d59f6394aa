# lib.sh - a booted systemd for the scenarios of tests/systemd; sourced by
# suite.sh after tests/netns/lib/lib.sh (its helpers apply: probe, knock_gets,
# plain_gets, like_closed, flood, hidden, ...), not run.
#
#   client ns $NS_C                     container (systemd-nspawn --boot)
#   +----------------------+            +------------------------------------+
#   | vc 192.0.2.1/24      |--- veth ---| vs 192.0.2.2/24  2001:db8::2/64    |
#   |    2001:db8::1/64    |            | systemd as PID 1, ssh.service :22, |
#   | prober.py, synflood, |            | knockgw.service from the package,  |
#   | nmap                 |            | nothing on :23 (closed port)       |
#   +----------------------+            +------------------------------------+
#
# The container's root is an overlay of this machine's / whose writes go to
# a tmpfs ($CT_DIR/layer), mounted in the mount namespace run.sh made for
# the suite (unshare --mount): no mount of it is ever visible outside, and
# all go with that namespace.  It boots with --private-network: the client
# namespace reaches it through a veth pair made into the container's
# network namespace after each boot (a boot makes a new one, as a reboot
# leaves no nftables table behind).  The container's /dev, /proc and /sys
# are systemd-nspawn's own; this machine's are never mounted into it.
# Everything made here is removed by cleanup(), which the EXIT trap runs
# even when a row fails: the container powered off (SIGTERM to
# systemd-nspawn; SIGKILL to it and to the container's init after 30 s),
# the overlay and the tmpfs unmounted, then tests/netns/lib/lib.sh's cleanup.
#
#   ct CMD...         runs CMD in the container (all its namespaces), with a
#                     plain environment
#   ct_boot           boots it (again), waits for systemd, wires the veth
#   ct_reboot         `systemctl reboot` in it: systemd-nspawn exits 133, as
#                     systemd-nspawn@.service takes it, and the same root is
#                     booted again
#   ct_active UNIT, ct_prop UNIT PROP, ct_journal UNIT (this boot's lines)
#   in_s, has_table   tests/netns/lib/lib.sh's, for the container

CT_DIR=$(mktemp -d /tmp/kgw-ct-XXXXXX)
CT_ROOT=$CT_DIR/root
CT_NSPAWN=
CT_LEADER=
CT_BOOTS=0
# Units of this machine that have nothing to do with the test and would
# only slow each boot (Debian enables what it installs): masked in the
# container.  Everything else boots as on the machine.
CT_MASK="postgresql.service prometheus.service fail2ban.service e2scrub_reap.service
apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer
man-db.timer systemd-timesyncd.service getty@tty1.service console-getty.service"

ct() {
	nsenter -t "$CT_LEADER" -a env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		LC_ALL=C HOME=/root DEBIAN_FRONTEND=noninteractive SYSTEMD_PAGER= "$@"
}
in_s() { ct "$@"; }
has_table() { ct nft list table inet knockgw >/dev/null 2>&1; }

# ct_root: the overlay; false if it cannot be made (the caller skips).
ct_root() {
	mkdir "$CT_DIR/layer" "$CT_ROOT" &&
		mount -t tmpfs -o mode=0755 tmpfs "$CT_DIR/layer" &&
		mkdir "$CT_DIR/layer/up" "$CT_DIR/layer/work" &&
		mount -t overlay overlay \
			-o "lowerdir=/,upperdir=$CT_DIR/layer/up,workdir=$CT_DIR/layer/work" "$CT_ROOT" &&
		[ "$(stat -f -c %T "$CT_ROOT")" = overlayfs ] || return 1
	for u in $CT_MASK; do
		ln -sf /dev/null "$CT_ROOT/etc/systemd/system/$u"
	done
	# A policy-rc.d that forbids every start (Docker images have one) is
	# not on a real host: the package's scripts must act as they would there.
	rm -f "$CT_ROOT/usr/sbin/policy-rc.d"
	# Nothing of the machine's knockgw (none is installed on a build host).
	rm -rf "$CT_ROOT/etc/knockgw" "$CT_ROOT/var/lib/knockgw"
}

ct_leader() { ps -o pid= -o comm= --ppid "$CT_NSPAWN" 2>/dev/null | awk '$2 == "systemd" { print $1 }'; }

ct_running() {
	case $(ct systemctl is-system-running 2>/dev/null) in
	running | degraded) return 0 ;;
	esac
	return 1
}

# ct_boot: boots the root, waits (60 s at most) for systemd to finish
# starting up, then wires the veth.
ct_boot() {
	CT_BOOTS=$((CT_BOOTS + 1))
	systemd-nspawn -q -D "$CT_ROOT" --boot --private-network --register=no --keep-unit \
		--console=passive >"$TMP/nspawn-$CT_BOOTS.log" 2>&1 &
	CT_NSPAWN=$!
	# run.sh checks at the end that none is left.
	[ -z "${KGW_SUITE_PIDS:-}" ] || echo "$CT_NSPAWN" >>"$KGW_SUITE_PIDS"
	CT_LEADER=
	i=0
	while [ -z "$CT_LEADER" ] && [ $i -lt 300 ]; do
		sleep 0.1
		CT_LEADER=$(ct_leader)
		i=$((i + 1))
	done
	if [ -z "$CT_LEADER" ] || ! wait_for 60 ct_running; then
		echo "# the container did not boot:"
		tail -n 20 "$TMP/nspawn-$CT_BOOTS.log" | sed 's/^/# /'
		return 1
	fi
	ip link add vc netns "$NS_C" type veth peer name vs netns "$CT_LEADER"
	in_c ip addr add "$C4"/24 dev vc
	in_c ip addr add "$C6"/64 dev vc nodad
	ct ip addr add "$S4"/24 dev vs
	ct ip addr add "$S6"/64 dev vs nodad
	# Checksums finished and checked on both ends (tests/netns/lib/lib.sh).
	in_c ethtool -K vc rx off tx off >/dev/null
	ct ethtool -K vs rx off tx off >/dev/null
	ct ip link set vs up
	in_c ip link set vc up
	wait_for 10 in_c ping -c1 -W1 "$S4" && wait_for 10 in_c ping -6 -c1 -W1 "$S6"
}

# ct_wait_gone SECONDS: systemd-nspawn exits within SECONDS; its status in
# CT_EXIT.
ct_wait_gone() {
	wait_for "$1" sh -c "! kill -0 $CT_NSPAWN 2>/dev/null" || return 1
	CT_EXIT=0
	wait "$CT_NSPAWN" || CT_EXIT=$?
}

# ct_reboot: the container reboots itself; systemd-nspawn then exits 133
# ("reboot me"), and the same root boots again.
ct_reboot() {
	ct systemctl reboot || return 1
	ct_wait_gone 60 || return 1
	[ "$CT_EXIT" = 133 ] || { echo "# systemd-nspawn exited $CT_EXIT, not 133 (reboot)"; return 1; }
	ct_boot
}

# ct_poweroff: SIGTERM to systemd-nspawn (a clean poweroff), 30 s at most;
# then SIGKILL to it and to the container's init (its PID namespace goes
# with it).
ct_poweroff() {
	[ -n "$CT_NSPAWN" ] || return 0
	kill -TERM "$CT_NSPAWN" 2>/dev/null || true
	if ! ct_wait_gone 30; then
		echo "# the container did not power off in 30 s: killed"
		[ -n "$CT_LEADER" ] && kill -9 "$CT_LEADER" 2>/dev/null
		kill -9 "$CT_NSPAWN" 2>/dev/null
		wait "$CT_NSPAWN" 2>/dev/null
	fi
	CT_NSPAWN=
	return 0
}

# not COMMAND...: COMMAND fails (for check).
not() { ! "$@"; }
ct_active() { [ "$(ct systemctl is-active "$1" 2>/dev/null)" = active ]; }
ct_failed() { [ "$(ct systemctl is-active "$1" 2>/dev/null)" = failed ]; }
ct_prop() { ct systemctl show -p "$2" --value "$1"; }
# ct_journal UNIT: this boot's journal of UNIT, messages only.
ct_journal() { ct journalctl -b -u "$1" -o cat --no-pager; }
# ct_has FILE PATTERN: the container's FILE has a line matching PATTERN.
ct_has() { ct grep -q -- "$2" "$1"; }

# ct_guards: the queue guards (knockgw-guard, src/kernel/qguard.h) running in
# the container, one PID a line.  ct_no_guard: none.  ct_one_guard: one,
# in knockgw.service's control group (systemd stops and restarts it with
# the daemon).
ct_guards() { ct pgrep -x knockgw-guard || true; }
ct_no_guard() { [ -z "$(ct_guards)" ]; }
ct_one_guard() {
	cog_g=$(ct_guards)
	[ "$(echo "$cog_g" | wc -w)" = 1 ] &&
		ct grep -q '/system.slice/knockgw.service$' "/proc/$cog_g/cgroup"
}
# ct_queues: the queues bound in the container's network namespace, one a
# line (/proc/net/netfilter/nfnetlink_queue).  ct_no_queue: the list is
# readable and empty, so every queue rule's bypass applies.
ct_queues() { ct cat /proc/net/netfilter/nfnetlink_queue; }
ct_no_queue() { ct test -r /proc/net/netfilter/nfnetlink_queue && [ -z "$(ct_queues)" ]; }

# ct_settle UNIT: waits (20 s at most) until UNIT is in no job (starting,
# stopping, auto-restart): active, failed or inactive.
ct_settle() {
	wait_for 20 sh -c "s=\$(nsenter -t $CT_LEADER -a systemctl is-active $1); \
		[ \"\$s\" = active ] || [ \"\$s\" = failed ] || [ \"\$s\" = inactive ]"
}

# The suite's cleanup: the container and its mounts first, then
# tests/netns/lib/lib.sh's (processes, namespaces, $TMP).  $CT_DIR is removed
# only when nothing is mounted under it any more, and never across a mount.
ct_cleanup() {
	set +e
	ct_poweroff
	umount "$CT_ROOT" 2>/dev/null
	umount "$CT_DIR/layer" 2>/dev/null
	if grep -q " $CT_DIR/" /proc/self/mountinfo; then
		echo "not ok - mounts left under $CT_DIR: not removed"
		grep " $CT_DIR/" /proc/self/mountinfo | sed 's/^/# /'
		FAILS=$((FAILS + 1))
	else
		rm -rf --one-file-system "$CT_DIR"
	fi
}
