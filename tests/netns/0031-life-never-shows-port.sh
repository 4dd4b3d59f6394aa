#!/bin/sh
# The daemon's own life never shows the protected service (on_stop "hide",
# the default).  While synflood.py sends unknocked SYNs to sshd's port 22,
# one every 2 ms, each event below happens; every SYN of each flood must get
# the closed-port RST+ACK, none a SYN-ACK, and none silence:
#   start (over the table a stopped daemon left), reload (SIGHUP), restart
#   (SIGTERM, then start, as systemctl restart does), an upgrade (a new
#   binary installed over the running one, then restart), a clean stop and
#   the time after it, kill -9 and the time after it (up to the next start),
#   and that next start.
# At kill -9 the SYNs that arrive while the kernel tears the killed process
# down (its memory first, then its files: until its queue socket is gone,
# the queue still takes SYNs) are answered by the queue guard (qguard.h);
# one it may miss (between its last read and its close) is allowed: the
# silent SYNs must form at most one unbroken run, with every SYN before
# and after it refused (0060 counts them at a finer pace).  After
# each event a valid knock still gets in while a daemon runs.  A start is
# also held still under gdb at two moments of binding its queue (before
# the queue's configuration goes out, and right after the kernel took it),
# while a plain SYN comes: it must get the closed-port RST+ACK too (the
# kernel drops, bypass or not, what meets a queue bound before its copy mode
# is set).  Then
# on_stop "open" deletes the table at a stop, as before; `knockgw flush`
# refuses while a daemon runs.
#
#   client ns $NS_C                     server ns $NS_S
#   +----------------------+            +-----------------------------+
#   | synflood.py -> :22   |--- veth ---| sshd :22, knockgw protects  |
#   | prober.py (knocks)   |            | 22 (native key)             |
#   +----------------------+            +-----------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
K=$(key_file k)
cat >"$TMP/knockgw.conf" <<EOC
keys = ( { name = "k"; file = "$K"; } );
protect = ( { port = 22; mode = "native"; keys = [ "k" ]; } );
EOC
# The "installed" binary the upgrade replaces, as make install does.
mkdir -p "$TMP/bin"
cp "$KNOCKGW" "$TMP/bin/knockgw"
LOG=$TMP/knockgw-$NS_S.log

# run_daemon: start_knockgw with the "installed" binary.
run_daemon() {
	KNOCKGW=$TMP/bin/knockgw start_knockgw "$NS_S" "$TMP/knockgw.conf"
}

# stop_daemon SIGNAL: the signal, then up to 5 s for the daemon to go.
stop_daemon() {
	kill "-$1" "$KGW_PID"
	wait_for 5 sh -c "! kill -0 $KGW_PID 2>/dev/null"
}

# knock_in NAME: a valid knock gets SYN-ACK.
N=0
knock_in() {
	N=$((N + 1))
	probe "$1" $C4 $S4 22 "$(isn native "$K" $S4 22 $((5000 + N)))" --tsval $((5000 + N))
	answered "$1" SA
}

run_daemon
check "running: a knock gets in" knock_in k0
stop_daemon TERM
check "a clean stop leaves the table" has_table

# paused_start NAME FUNCTION SKIP: a start held under gdb at the call of
# FUNCTION after the first SKIP, while a plain SYN comes (the prober waits
# for its answer), then let go 0.5 s later; the SYN's answer is in NAME.
# The daemon stops.  The SYN queue is the first a start binds; the others
# (probes, data) follow with the breakpoint gone.
paused_start() {
	rm -f "$TMP/paused" "$TMP/go"
	# LeakSanitizer cannot work under ptrace (make check-asan): off here.
	ip netns exec "$NS_S" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		gdb -q -batch -nx -ex 'set breakpoint pending on' \
		-ex 'handle SIGTERM nostop noprint pass' -ex "break $2" -ex "ignore 1 $3" -ex run \
		-ex "shell touch $TMP/paused; n=0; while [ ! -e $TMP/go ] && [ \$n -lt 200 ]; do sleep 0.05; n=\$((n + 1)); done" \
		-ex 'delete 1' -ex continue --args "$TMP/bin/knockgw" -f -v -c "$TMP/knockgw.conf" \
		>"$TMP/gdb-$1.log" 2>&1 &
	gdb_pid=$!
	wait_for 20 test -e "$TMP/paused" || cat "$TMP/gdb-$1.log"
	(sleep 0.5 && touch "$TMP/go") &
	probe "$1" $C4 $S4 22 01020304 --tsval 4000
	wait_for 10 grep -q "^ready:" "$TMP/gdb-$1.log"
	pkill -TERM -f "^$TMP/bin/knockgw -f -v -c" || true
	wait_for 10 sh -c "! kill -0 $gdb_pid"
}
paused_start bindbefore nfq_nlmsg_cfg_put_params 0
check "a SYN while a start is about to bind its queue gets the closed-port RST+ACK" \
	answered bindbefore RA
paused_start bindafter nl_set_other 1
check "a SYN right after the kernel took the queue's configuration gets the closed-port RST+ACK" \
	answered bindafter RA

flood start 1000
run_daemon
flood_done
check "start over the table a stopped daemon left: every SYN refused" hidden start
check "... and then a knock gets in" knock_in k1

flood reload 1000
kill -HUP "$KGW_PID"
wait_for 10 grep -q '^reloaded' "$LOG"
flood_done
check "reload: every SYN refused" hidden reload
check "... and then a knock gets in" knock_in k2

flood restart 1500
stop_daemon TERM
run_daemon
flood_done
check "restart: every SYN refused" hidden restart
check "... and then a knock gets in" knock_in k3

# An upgrade: the binary replaced under the running daemon (a new inode,
# as install(1) makes), then a restart.
flood upgrade 1500
cp "$KNOCKGW" "$TMP/bin/knockgw.new"
mv -f "$TMP/bin/knockgw.new" "$TMP/bin/knockgw"
stop_daemon TERM
run_daemon
flood_done
check "upgrade and restart: every SYN refused" hidden upgrade
check "... and then a knock gets in" knock_in k4

flood stop 1000
stop_daemon TERM
flood_done
check "clean stop, and after it: every SYN refused" hidden stop
probe stopknock $C4 $S4 22 "$(isn native "$K" $S4 22 6001)" --tsval 6001
check "... and a valid knock too: nothing verifies it" answered stopknock RA

run_daemon
flood kill 1500
stop_daemon KILL
flood_done
check "kill -9, and after it: no SYN-ACK; RST+ACK but for one run during the teardown" \
	hidden kill 1
check "... the table stays" has_table

flood restart_after_kill 1000
run_daemon
flood_done
check "the next start after kill -9: every SYN refused" hidden restart_after_kill
check "... and then a knock gets in" knock_in k5

in_s "$KNOCKGW" flush -c "$TMP/knockgw.conf" >"$TMP/flush.out" 2>&1 && rc=0 || rc=$?
check "knockgw flush under a running daemon: refused" \
	sh -c "[ $rc = 1 ] && grep -q 'stop it first' '$TMP/flush.out'"
check "... and the table is still there" has_table

# on_stop "open": the table goes at a stop, the service answers again.
stop_daemon TERM
echo 'on_stop = "open";' >>"$TMP/knockgw.conf"
run_daemon
stop_daemon TERM
check "on_stop open: a clean stop deletes the table" no_table
probe open $C4 $S4 22 11111111
check "... and sshd answers a plain SYN" answered open SA
check "no error in the log" sh -c "! grep -E '^(cannot|reload refused)' '$LOG'"

# A socket on rules.refuse_port would take the refused SYNs: no start.
in_s python3 -c 'import socket, time
s = socket.socket(); s.bind(("0.0.0.0", 1)); s.listen(); time.sleep(60)' &
PIDS="$PIDS $!"
listening 1
in_s timeout 20 "$KNOCKGW" -f -c "$TMP/knockgw.conf" >"$TMP/port1.log" 2>&1 && rc=0 || rc=$?
check "something listens on refuse_port 1: the daemon does not start" \
	sh -c "[ $rc = 1 ] && grep -q 'rules.refuse_port 1: a socket listens there' '$TMP/port1.log'"
finish
