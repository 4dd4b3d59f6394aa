#!/bin/sh
# queue.fail_open = true means "no daemon attached: the rules' queue bypass
# lets packets through", and nothing more.  A daemon that is attached but
# stalled (SIGSTOP) with a full queue must not let a flood of unknocked SYNs
# reach sshd: the overflow is dropped, not accepted.  After SIGCONT knocks
# work again.  Only once the daemon is gone (kill -9, the table stays) does
# an unknocked SYN reach sshd, and with fail_open = false it is dropped.
#
#   client ns (prober.py, synburst.py)  ---- veth ----  server ns
#                                                       sshd :22, knockgw
#                                                       (22 native, maxlen 16)
. "$(dirname "$0")/lib.sh"

BURST=40
MAXLEN=16

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)
conf() { # FILE FAIL_OPEN
	cat >"$1" <<EOC
keys = ( { name = "k"; file = "$K"; } );
protect = ( { port = 22; mode = "native"; keys = [ "k" ]; } );
queue = { fail_open = $2; maxlen = $MAXLEN; };
EOC
}
knock_isn() { "$KC" isn --mode native --key-file "$K" --dst $S4 --port 22 --tsval "$1"; }
# stopped PID: every thread of PID is in the stopped state.
stopped() {
	for st in /proc/"$1"/task/*/stat; do
		# The state follows "(comm) ".
		[ "$(sed 's/.*) \(.\).*/\1/' "$st")" = T ] || return 1
	done
}
running() { ! stopped "$1"; }
table_present() { in_s nft list table inet knockgw >/dev/null 2>&1; }
kill9() {
	kill -9 "$KGW_PID"
	wait "$KGW_PID" 2>/dev/null || true
}

conf "$TMP/open.conf" true
start_knockgw "$NS_S" "$TMP/open.conf"

probe k1 $C4 $S4 22 "$(knock_isn 1000)" --tsval 1000
check "fail_open = true, daemon running: a knock gets SYN-ACK" [ "$(flags_of k1)" = SA ]
probe p1 $C4 $S4 22 11111111 --tsval 1000
check "fail_open = true, daemon running: a plain SYN gets RST" [ "$(flags_of p1)" = RA ]

# The attack: stall the attached daemon, then send more unknocked SYNs than
# the queue holds.  The first MAXLEN wait in the queue; the rest overflow.
refused0=$(counter syn_refused)
kill -STOP "$KGW_PID"
wait_for 5 stopped "$KGW_PID"
python3 -c "
import random
for i in range($BURST):
    print(random.randrange(1, 1 << 32), '%08x' % random.getrandbits(32))
" >"$TMP/burst.list"
in_c python3 "$TOP/tests/netns/synburst.py" --iface vc --src $C4 --dst $S4 --dport 22 \
	--list "$TMP/burst.list" --timeout 3 >"$TMP/burst.json"
echo "# stalled daemon, $BURST unknocked SYNs: $(json "$TMP/burst.json" "j['answers']")"
check "stalled daemon: none of $BURST unknocked SYNs gets a SYN-ACK" \
	[ "$(json "$TMP/burst.json" "j['answers'].get('SA', 0)")" = 0 ]
check "stalled daemon: none of them gets any answer while it is stopped" \
	[ "$(json "$TMP/burst.json" "j['answers'].get('none', 0)")" = $BURST ]

kill -CONT "$KGW_PID"
wait_for 5 running "$KGW_PID"
check "after SIGCONT: the $MAXLEN SYNs held in the queue were refused" \
	[ "$(($(counter syn_refused) - refused0))" = $MAXLEN ]
probe k2 $C4 $S4 22 "$(knock_isn 2000)" --tsval 2000
check "after SIGCONT: a knock gets SYN-ACK" [ "$(flags_of k2)" = SA ]
probe p2 $C4 $S4 22 11111111 --tsval 2000
check "after SIGCONT: a plain SYN gets RST" [ "$(flags_of p2)" = RA ]

# What fail_open = true does mean: no daemon attached, the rules' bypass
# lets packets through unchecked.
kill9
check "fail_open = true, kill -9: the table stays" table_present
probe p3 $C4 $S4 22 11111111 --tsval 3000
check "fail_open = true, no daemon attached: a plain SYN reaches sshd (SYN-ACK)" \
	[ "$(flags_of p3)" = SA ]

# And with fail_open = false the same loss of the daemon fails closed.
conf "$TMP/closed.conf" false
start_knockgw "$NS_S" "$TMP/closed.conf"
probe k4 $C4 $S4 22 "$(knock_isn 4000)" --tsval 4000
check "fail_open = false, daemon running: a knock gets SYN-ACK" [ "$(flags_of k4)" = SA ]
kill9
check "fail_open = false, kill -9: the table stays" table_present
probe p4 $C4 $S4 22 11111111 --tsval 4000
check "fail_open = false, no daemon attached: a plain SYN is dropped (no answer)" \
	[ "$(flags_of p4)" = None ]
finish
