#!/bin/sh
# Server role under bad input: a burst of malformed segments (truncated
# headers, bogus lengths) is dropped and counted, SYNs with broken options
# are refused like any other (as the kernel reads them), and the daemon
# keeps answering; after a flood that overflows its queue and socket while
# it is stopped, it still lets the next valid knock through.
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)
start_server "$(entry 22)" "queue = { num = 3; maxlen = 256; };"
# knock_soon: one of three fresh knocks gets SYN-ACK.
knock_soon() { knock_gets SA || knock_gets SA || knock_gets SA; }

for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
	in_c $PROBER burst --iface vc --src $src --dst $dst --dport 22 --count 300 >"$TMP/burst.json"
	check "IPv$fam: 300 malformed segments sent" [ "$(json "$TMP/burst.json" "j['sent']")" = 300 ]
done
check "the daemon survived the malformed burst" kill -0 "$KGW_PID"
# Malformed options do not make a segment malformed (the kernel reads what
# it can and answers such a SYN like any other): refused like any bad knock.
check "SYNs with malformed options were refused like any SYN" \
	[ "$(counter syn_refused)" -ge 100 ]
check "bad data offsets were counted" [ "$(counter drop_bad_doff)" -gt 0 ]
check "a valid knock still gets SYN-ACK" knock_gets SA

# Freeze the daemon, flood its queue far past maxlen and its socket buffer,
# thaw it: it must recover (ENOBUFS counted, no wedge) and answer at once.
kill -STOP "$KGW_PID"
in_c $PROBER flood --iface vc --src $C4 --dst $S4 --dport 22 --count 60000 --seconds 20 \
	>"$TMP/flood.json"
kill -CONT "$KGW_PID"
dropped=$(in_s awk '$1 == 3 { print $6 + $7 }' /proc/net/netfilter/nfnetlink_queue)
check "the flood overflowed the queue (kernel dropped $dropped)" [ "${dropped:-0}" -gt 0 ]
check "right after the flood a valid knock gets SYN-ACK" knock_soon
check "the daemon is still running" kill -0 "$KGW_PID"
check "the flood's SYNs were refused and counted" [ "$(counter syn_refused)" -gt 100 ]

# Again with a queue longer than the socket buffer holds: now the netlink
# socket itself overflows (ENOBUFS), after which a reader could wedge (nfq.c).
stop_knockgw
sed -i 's/maxlen = 256;/maxlen = 200000;/' "$TMP/knockgw.conf"
start_knockgw "$NS_S" "$TMP/knockgw.conf"
kill -STOP "$KGW_PID"
in_c $PROBER flood --iface vc --src $C4 --dst $S4 --dport 22 --count 60000 --seconds 20 \
	>"$TMP/flood2.json"
kill -CONT "$KGW_PID"
check "after a socket overflow a valid knock gets SYN-ACK" knock_soon
check "the overflow was seen and counted (ENOBUFS)" [ "$(qcounter enobufs)" -gt 0 ]
check "the daemon is still running" kill -0 "$KGW_PID"
finish
