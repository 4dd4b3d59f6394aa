#!/bin/sh
# The shipped unit must be able to run the daemon.  systemd/knockgw.service
# is read (tests/netns/lib/unitsandbox.py) and its sandbox rebuilt without
# systemd: CapabilityBoundingSet= and NoNewPrivileges= through setpriv;
# UMask=, SystemCallFilter= with SystemCallErrorNumber=,
# SystemCallArchitectures=, RestrictAddressFamilies= and
# MemoryDenyWriteExecute= through tests/tools/unitexec (seccomp).  What it
# cannot rebuild is printed as "not reproduced".  Under that sandbox the
# daemon must become ready, install its table, let a valid knock through
# and refuse a plain SYN, reload on SIGHUP, answer `knockgw status`, keep
# only CAP_NET_ADMIN in every thread (and in its queue guard, confined
# alike), and on SIGTERM exit, its guard too, leaving the hiding table.
#
#   client ns $NS_C                       server ns $NS_S
#   +-----------------------+             +------------------------------------+
#   | prober.py -> :22      |---- veth ---| sshd :22; knockgw under the unit's |
#   |   and :2222           |             |   sandbox protects 22 (and, after  |
#   +-----------------------+             |   the reload, 2222)                |
#                                         +------------------------------------+
. "$(dirname "$0")/lib/lib.sh"

UNIT=$TOP/systemd/knockgw.service
UNITEXEC=$BUILD/tools/unitexec
CAP_NET_ADMIN_MASK=0000000000001000	# 1 << 12

python3 "$TOP/tests/netns/lib/unitsandbox.py" "$UNIT" "$UNITEXEC" >"$TMP/sandbox.words" \
	2>"$TMP/sandbox.notes"
cat "$TMP/sandbox.notes"
echo "# sandbox: $(tr '\n' ' ' <"$TMP/sandbox.words" | cut -c1-200)..."
check "the unit's bounding set, no_new_privs and system call filter are rebuilt" \
	sh -c "grep -q -- --bounding-set '$TMP/sandbox.words' &&
		grep -qx -- --no-new-privs '$TMP/sandbox.words' && grep -qx -- -s '$TMP/sandbox.words'"

# The daemon, through the sandbox: a wrapper start_knockgw can run (the
# exec chain keeps the PID, so KGW_PID is the daemon's).  In a sanitizer
# build LeakSanitizer would need ptrace, which the filter refuses as it
# should: the leak check is off for the sandboxed daemon only.
K=$(key_file k)
{
	echo '#!/bin/sh'
	echo 'ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; export ASAN_OPTIONS'
	printf 'exec'
	while IFS= read -r w; do printf " '%s'" "$w"; done <"$TMP/sandbox.words"
	printf " '%s' \"\$@\"\n" "$KNOCKGW"
} >"$TMP/knockgw-sandboxed"
chmod 755 "$TMP/knockgw-sandboxed"
REAL_KNOCKGW=$KNOCKGW

# The sandbox bites: a call outside @system-service (ptrace) and a socket
# family outside the list (AF_PACKET) fail as the unit says.
bites() {
	sed "s|'$KNOCKGW'|python3|" "$TMP/knockgw-sandboxed" >"$TMP/python-sandboxed"
	sh "$TMP/python-sandboxed" -c '
import ctypes, errno, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(0, 0, 0, 0)
e1 = ctypes.get_errno()
try:
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    e2 = 0
except OSError as e:
    e2 = e.errno
print("ptrace", r, errno.errorcode.get(e1), "AF_PACKET", errno.errorcode.get(e2))
sys.exit(0 if (r, e1, e2) == (-1, errno.EPERM, errno.EAFNOSUPPORT) else 1)'
}
check "the rebuilt sandbox refuses ptrace (EPERM) and AF_PACKET (EAFNOSUPPORT)" bites

make_topology
quiet_client_rsts
start_sshd
start_sshd2
# RuntimeDirectory=knockgw, as systemd makes it (under $TMP, not /run).
mkdir -p "$TMP/run"
mkdir -m "$(sed -n 's/^RuntimeDirectoryMode=//p' "$UNIT")" "$TMP/run/knockgw"
cat >"$TMP/knockgw.conf" <<EOC
control_socket = "$TMP/run/knockgw/control";
keys = ( { name = "k"; file = "$K"; }, { name = "legacy"; secret = "$SECRET"; } );
protect = ( { port = 22; mode = "native"; keys = [ "k" ]; } );
EOC
chmod 600 "$TMP/knockgw.conf"	# it holds a secret: owner only
KNOCKGW=$TMP/knockgw-sandboxed
started=0
start_knockgw "$NS_S" "$TMP/knockgw.conf" && started=1
KNOCKGW=$REAL_KNOCKGW
LOG=$TMP/knockgw-$NS_S.log
check "under the unit's sandbox the daemon becomes ready" [ $started = 1 ]
if [ $started = 0 ]; then
	grep -v '^counter' "$LOG" | head -5
	finish
	exit 1
fi
grep '^capabilities' "$LOG"

status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
in_force() {
	[ "$(status_of "$KGW_PID" NoNewPrivs)" = 1 ] && [ "$(status_of "$KGW_PID" Seccomp)" = 2 ]
}
check "the sandbox is in force (no_new_privs, a seccomp filter)" in_force
check "the bounding set is the unit's (CAP_NET_ADMIN CAP_NET_RAW)" \
	[ "$(status_of "$KGW_PID" CapBnd)" = 0000000000003000 ]
only_net_admin() {
	n=0
	for t in /proc/"$KGW_PID"/task/*; do
		[ "$(status_of "${t#/proc/}" CapEff)" = $CAP_NET_ADMIN_MASK ] || return 1
		[ "$(status_of "${t#/proc/}" CapPrm)" = $CAP_NET_ADMIN_MASK ] || return 1
		[ "$(status_of "${t#/proc/}" CapInh)" = 0000000000000000 ] || return 1
		[ "$(status_of "${t#/proc/}" CapAmb)" = 0000000000000000 ] || return 1
		n=$((n + 1))
	done
	echo "# $n thread(s): CapEff = CapPrm = $CAP_NET_ADMIN_MASK"
	[ $n -ge 2 ]
}
check "every thread keeps CAP_NET_ADMIN only (CapEff, CapPrm; none inheritable, ambient)" \
	only_net_admin
# The queue guard (forked after the drop) runs under the same sandbox.
guard_confined() {
	gc_g=$(guard_pids)
	[ "$(echo "$gc_g" | wc -w)" = 1 ] || return 1
	[ "$(status_of "$gc_g" CapEff)" = $CAP_NET_ADMIN_MASK ] &&
		[ "$(status_of "$gc_g" CapPrm)" = $CAP_NET_ADMIN_MASK ] &&
		[ "$(status_of "$gc_g" CapInh)" = 0000000000000000 ] &&
		[ "$(status_of "$gc_g" CapAmb)" = 0000000000000000 ] &&
		[ "$(status_of "$gc_g" CapBnd)" = "$(status_of "$KGW_PID" CapBnd)" ] &&
		[ "$(status_of "$gc_g" NoNewPrivs)" = 1 ] && [ "$(status_of "$gc_g" Seccomp)" = 2 ]
}
check "the queue guard: CAP_NET_ADMIN only, the same bounding set, no_new_privs, seccomp" \
	guard_confined
check "table inet knockgw is installed" has_table

check "a valid knock gets SYN-ACK" knock_gets SA
check "a plain SYN gets the closed-port RST" plain_gets RA
status_answers() {
	in_s "$KNOCKGW" status -c "$TMP/knockgw.conf" >"$TMP/status.out" &&
		grep -q '^knockgw running' "$TMP/status.out"
}
check "knockgw status answers (control socket in the runtime directory)" status_answers
check "the control socket is mode 0666 under UMask=0077" \
	[ "$(stat -c %a "$TMP/run/knockgw/control")" = 666 ]

# SIGHUP under the sandbox: a second protected port, in knock mode.
cat >"$TMP/knockgw.conf" <<EOC
control_socket = "$TMP/run/knockgw/control";
keys = ( { name = "k"; file = "$K"; }, { name = "legacy"; secret = "$SECRET"; } );
protect = (
	{ port = 22; mode = "native"; keys = [ "k" ]; },
	{ port = 2222; mode = "knock"; keys = [ "legacy" ]; }
);
EOC
chmod 600 "$TMP/knockgw.conf"	# it holds a secret: owner only
check "the reloaded file is valid" "$KNOCKGW" -n -c "$TMP/knockgw.conf"
kill -HUP "$KGW_PID"
check "SIGHUP: reloaded" wait_for 10 grep -q '^reloaded: 2 protected port' "$LOG"
probe kn $C4 $S4 2222 "$(isn knock "$SECRET" $S4 2222 $((SPORT + 1)))" --tsval $((SPORT + 1))
check "after the reload a knock on the new port gets SYN-ACK" answered kn SA
check "after the reload every thread still has CAP_NET_ADMIN only" only_net_admin

kill "$KGW_PID"
if wait "$KGW_PID"; then rc=0; else rc=$?; fi
check "SIGTERM: exit status 0" [ $rc = 0 ]
check "... and the queue guard went with it" wait_for 5 no_guard
check "SIGTERM: the table stays, hiding (on_stop hide)" has_table
check "no error in the log" sh -c "! grep -E '^(cannot|reload refused|reload:)' '$LOG'"
finish
