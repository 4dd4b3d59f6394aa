#!/bin/sh
# A local user passes the control socket a descriptor whose fstat() and
# close() never return: a file on a FUSE file system whose server (here
# tests/netns/lib/fusehang.py; in an attack the user's own) holds every
# GETATTR and FLUSH the daemon sends.  The main thread must not wait on
# it: `knockgw status` still answers, INTENT gets its refusal at once, the
# descriptors held are bounded (CTL_CONN_PER_UID for one uid; more are
# refused "busy" without being taken), and once the FUSE server answers
# they are all closed.  SIGTERM still ends the daemon.
#
#   root namespace                        server ns $NS_S
#   +------------------------------+      +--------------------------------+
#   | fusehang.py on $TMP/fuse     |      | knockgw (protects 22), control |
#   |   holds GETATTR/FLUSH of the |      |   socket $TMP/server.sock      |
#   |   daemon's threads           |      +--------------------------------+
#   | client (uid nobody): opens   |-- unix socket, SCM_RIGHTS --^
#   |   $TMP/fuse/f, passes it     |
#   +------------------------------+
. "$(dirname "$0")/lib/lib.sh"

NOBODY=65534
SOCK=$TMP/server.sock
MNT=$TMP/fuse
FUSE_PID=

# The FUSE server goes first (its connection aborts, whoever waits on it
# is released), then the mount, then what lib.sh cleans.
fuse_down() {
	set +e	# nothing here may keep cleanup from running
	[ -n "$FUSE_PID" ] && kill "$FUSE_PID" 2>/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -n "$FUSE_PID" ] && kill -0 "$FUSE_PID" 2>/dev/null || break
		sleep 0.2
	done
	umount -l "$MNT" 2>/dev/null
	true
}
trap 'fuse_down; cleanup' EXIT

make_topology
K=$(key_file k)
cat >"$TMP/knockgw.conf" <<EOC
control_socket = "$SOCK";
keys = ( { name = "k"; file = "$K"; } );
protect = ( { port = 22; mode = "native"; keys = [ "k" ]; } );
knock = ( { dst = "198.51.100.7"; port = 22; mode = "native"; key = "k"; integrity_len = 4; } );
EOC
start_knockgw "$NS_S" "$TMP/knockgw.conf"
LOG=$TMP/knockgw-$NS_S.log

mkdir "$MNT"
python3 "$TOP/tests/netns/lib/fusehang.py" "$MNT" "$TMP/fuse.state" "$KGW_PID" \
	2>"$TMP/fuse.err" &
FUSE_PID=$!
check "the FUSE file system is mounted" wait_for 5 grep -q '^mounted' "$TMP/fuse.state"

# pass NAME COUNT [PER_MSG]: COUNT connections as uid nobody, each passing
# PER_MSG (1) descriptors of $MNT/f with an INTENT; replies, one a line,
# in $TMP/NAME.out ("timeout" when none came within 3 s).
pass() {
	python3 - "$MNT/f" "$SOCK" "$2" "${3:-1}" $NOBODY >"$TMP/$1.out" <<-'EOF'
	import os, socket, sys
	path, sock, count, per, uid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
	fds = [[os.open(path, os.O_RDONLY) for _ in range(per)] for _ in range(count)]
	os.setgroups([])
	os.setgid(uid)
	os.setuid(uid)
	for group in fds:
	    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	    s.settimeout(3)
	    s.connect(sock)
	    socket.send_fds(s, [b"INTENT 198.51.100.7 22 00112233\n"], group)
	    try:
	        print(s.recv(100).decode().strip() or "closed")
	    except socket.timeout:
	        print("timeout")
	    s.close()
	    for fd in group:
	        os.close(fd)    # this process's own FLUSH is answered
	EOF
}
status_answers() {
	timeout 5 ip netns exec "$NS_S" "$KNOCKGW" status -c "$TMP/knockgw.conf" \
		>"$TMP/status.out" 2>&1 && grep -q '^knockgw running' "$TMP/status.out"
}
ctl() { v=$(awk -v n="$1" '$1 == "control" && $2 == n { print $3 }' "$TMP/status.out"); echo "${v:-0}"; }
fds() { ls "/proc/$KGW_PID/fd" | wc -l; }

check "before: knockgw status answers" status_answers
FDS_BEFORE=$(fds)

pass one 1
echo "# one FUSE descriptor: $(cat "$TMP/one.out")"
check "a FUSE file passed with INTENT is refused at once (not-your-socket)" \
	[ "$(cat "$TMP/one.out")" = "ERR not-your-socket" ]
check "its close is under way and held by the FUSE server (FLUSH)" \
	wait_for 5 grep -q '^held FLUSH' "$TMP/fuse.state"
check "while it is held, knockgw status answers" status_answers
check "the main thread never fstat()ed it (no GETATTR held)" \
	sh -c "! grep -q '^held GETATTR' '$TMP/fuse.state'"

# The uid's quota: 8 descriptors still closing; the rest are not taken.
pass many 12
echo "# twelve more: $(sort "$TMP/many.out" | uniq -c | tr -s ' \n' ' ')"
check "twelve more: none waits for an answer" sh -c "! grep -q timeout '$TMP/many.out'"
check "twelve more: past the quota they are refused busy" grep -q '^ERR busy' "$TMP/many.out"
check "while they are held, knockgw status answers" status_answers
check "counted: the not-sockets taken (1, then 7 up to the quota)" [ "$(ctl ctl_nonsocket_fds)" = 8 ]
check "counted: the refused ones" [ "$(ctl ctl_fds_refused)" -ge 4 ]
held=$(($(fds) - FDS_BEFORE))
echo "# descriptors held while the FUSE server holds the flushes: $held"
check "the daemon holds at most 8 of them" [ "$held" -le 8 ]

# Three in one message: one is taken, the kernel drops the others unflushed.
pass three 1 3
check "three in one message: bad-request or busy" \
	grep -Eq '^ERR (bad-request|busy)$' "$TMP/three.out"
check "still: knockgw status answers" status_answers

# The FUSE server answers: everything is closed, the quota is free again.
kill -USR1 "$FUSE_PID"
check "once the flushes are answered every descriptor is closed" \
	wait_for 10 sh -c "[ \$(ls /proc/$KGW_PID/fd | wc -l) -le $FDS_BEFORE ]"
pass again 1
check "then a FUSE file is taken (and refused) again" \
	[ "$(cat "$TMP/again.out")" = "ERR not-your-socket" ]
check "the daemon is running" kill -0 "$KGW_PID"

kill "$KGW_PID"
if wait "$KGW_PID"; then rc=0; else rc=$?; fi
check "SIGTERM: exit status 0" [ $rc = 0 ]
finish
