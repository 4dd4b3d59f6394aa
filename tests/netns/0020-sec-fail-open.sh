#!/bin/sh
# queue.fail_open = true means "no daemon attached: the rules' queue bypass
# lets packets through", and nothing more.  A daemon that is attached but
# stalled (SIGSTOP) with a full queue must not let a flood of unknocked SYNs
# reach sshd: the overflow is dropped, not accepted.  After SIGCONT knocks
# work again.  Only once the daemon is gone (kill -9, the table stays) does
# an unknocked SYN reach sshd (fail_open = true needs on_stop = "open"), and
# with fail_open = false it gets the kernel's closed-port RST.
#
#   client ns (prober.py, synburst.py)  ---- veth ----  server ns
#                                                       sshd :22, knockgw
#                                                       (22 native, maxlen 16)
. "$(dirname "$0")/lib/lib.sh"

BURST=40
MAXLEN=16

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)
# stopped PID: every thread of PID is in the stopped state.
stopped() {
	for st in /proc/"$1"/task/*/stat; do
		# The state follows "(comm) ".
		[ "$(sed 's/.*) \(.\).*/\1/' "$st")" = T ] || return 1
	done
}
running() { ! stopped "$1"; }
# lost FAIL_OPEN FLAGS WHAT: the daemon dies (kill -9); its table must
# stay, and a plain SYN get FLAGS (WHAT says what that means).
lost() {
	kill -9 "$KGW_PID"
	wait "$KGW_PID" 2>/dev/null || true
	check "fail_open = $1, kill -9: the table stays" has_table
	check "fail_open = $1, no daemon attached: a plain SYN $3" plain_gets "$2"
}

start_server "$(entry 22)" "queue = { fail_open = true; maxlen = $MAXLEN; };" \
	'on_stop = "open";'

check "fail_open = true, daemon running: a knock gets SYN-ACK" knock_gets SA
check "fail_open = true, daemon running: a plain SYN gets RST" plain_gets RA

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
in_c python3 "$TOP/tests/netns/lib/synburst.py" --iface vc --src $C4 --dst $S4 --dport 22 \
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
check "after SIGCONT: a knock gets SYN-ACK" knock_gets SA
check "after SIGCONT: a plain SYN gets RST" plain_gets RA

# What fail_open = true does mean: no daemon attached, the rules' bypass
# lets packets through unchecked.
lost true SA "reaches sshd (SYN-ACK)"

# And with fail_open = false the same loss of the daemon fails closed.
start_server "$(entry 22)" "queue = { fail_open = false; maxlen = $MAXLEN; };"
check "fail_open = false, daemon running: a knock gets SYN-ACK" knock_gets SA
lost false RA "gets the closed-port RST (the kernel's)"
finish
