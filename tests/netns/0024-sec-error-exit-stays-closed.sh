#!/bin/sh
# An error stop must not open the protected ports.  The queue socket of a
# running daemon is closed from outside (gdb makes the daemon call close()
# on it, the way a kernel error would end its reads): the worker's receive
# fails, the daemon stops with exit status 1, and its table stays, so a
# plain SYN to sshd gets the closed-port RST from the kernel (nobody reads
# the queue: its bypass sends the SYN on to the nat refusal) instead of
# reaching it; on the old code the table was deleted and sshd answered.
# The next start takes over.
#
#   client ns $NS_C                 server ns $NS_S
#   +-----------------+             +---------------------------------+
#   | prober.py       |--- veth ----| sshd :22, knockgw (queue 0)     |
#   +-----------------+             +---------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)
start_server "$(entry 22)" "queue = { num = 0; };"
LOG=$TMP/knockgw-$NS_S.log

check "a valid knock passes" knock_gets SA

# The queue's netlink socket: its port id from the queue's own status line,
# its inode from the namespace's netlink table, its descriptor from /proc.
portid=$(in_s awk '$1 == 0 { print $2 }' /proc/net/netfilter/nfnetlink_queue)
inode=$(in_s awk -v p="$portid" '$2 == 12 && $3 == p { print $10 }' /proc/net/netlink)
fd=$(ls -l "/proc/$KGW_PID/fd" | awk -v s="socket:[$inode]" '$NF == s { print $(NF - 2) }')
check "the queue socket found (port id $portid, descriptor $fd)" [ -n "$fd" ]
DEBUGINFOD_URLS="" timeout 60 gdb -nx -q -batch -p "$KGW_PID" -ex "call (int)close($fd)" \
	-ex detach >"$TMP/gdb.log" 2>&1 || true
rc=0
wait "$KGW_PID" || rc=$?
check "the daemon stopped on the receive error, exit status 1" [ "$rc" = 1 ]
check "it said why" grep -q "^queue 0: receive failed" "$LOG"
check "it said the table stays" grep -q "stopping on an error: table inet knockgw stays" "$LOG"
check "the table is still installed" has_table
check "a plain SYN to sshd gets the closed-port RST (nobody reads the queue)" \
	like_closed gone $C4 $S4 22 01020304 --tsval 99

start_knockgw "$NS_S" "$TMP/knockgw.conf"
check "the next start takes over: a valid knock passes" knock_gets SA
check "... and a plain SYN gets the closed-port RST" plain_gets RA
finish
