#!/bin/sh
# Fault: table inet knockgw deleted by hand under running daemons (nft
# delete table, nft flush ruleset).  Each daemon notices within a few
# seconds, logs "table inet knockgw disappeared; installing it again",
# counts it ("N table restore(s)" in knockgw status) and puts back exactly
# the table it had; afterwards a valid knock passes, a plain SYN gets the
# closed-port RST, and the client role knocks an unmodified ssh again.
#
#   client ns $NS_C                          server ns $NS_S
#   +--------------------------------+       +--------------------------------+
#   | knockgw client role:           |       | knockgw server role:           |
#   |   knocks S4:22 (native)        |-veth--|   port 22 native, sshd         |
#   | ssh (through the client role)  |       |   port 2222 knock, sshd        |
#   | prober.py -> port 2222         |       | nft delete table / flush       |
#   +--------------------------------+       +--------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
start_sshd2

K=$(key_file k)
two_port_server_conf "$TMP/server.conf"
cat >"$TMP/client.conf" <<EOC
control_socket = "$TMP/client.sock";
keys = ( { name = "k"; file = "$K"; } );
knock = ( { dst = "$S4"; port = 22; mode = "native"; key = "k"; } );
EOC
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID
start_knockgw "$NS_S" "$TMP/server.conf"
SRV=$KGW_PID
SLOG=$TMP/knockgw-$NS_S.log
CLOG=$TMP/knockgw-$NS_C.log

SSH="ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
	-o ConnectTimeout=10 -i $TMP/userkey"
ssh_ok() { [ "$(in_c timeout 30 $SSH root@$S4 echo "$1" 2>/dev/null)" = "$1" ]; }
# The prober goes to port 2222, which the client role does not knock.  Each
# probe takes a new source port (so no earlier half-open connection answers
# it); probe runs in this shell, not in $(...), to keep the count.
SPORT=43000
TSVAL=100
probe() { # SEQ -> FLAGS: the answer's flags
	SPORT=$((SPORT + 1))
	TSVAL=$((TSVAL + 1))
	in_c $PROBER probe --iface vc --src $C4 --dst $S4 --sport $SPORT --dport 2222 \
		--seq "$1" --tsval $TSVAL >"$TMP/probe.json"
	FLAGS=$(json "$TMP/probe.json" "(j['answer'] or {}).get('flagstr')")
}
knock_ok() {
	probe "0x$("$KC" isn --mode knock --secret "$SECRET" --dst $S4 --port 2222 \
		--tsval $((TSVAL + 1)))"
	[ "$FLAGS" = SA ]
}
plain_refused() {
	probe 0x12345678
	[ "$FLAGS" = RA ]
}
strip() { sed -e 's/counter packets [0-9]* bytes [0-9]* //' -e '/^# Warning/d'; }
table_of() { ip netns exec "$1" nft list table inet knockgw 2>/dev/null | strip; }
restores() { # NS CONF -> the "N table restore(s)" figure of knockgw status
	ip netns exec "$1" "$KNOCKGW" status -c "$2" 2>/dev/null |
		sed -n 's/.* \([0-9]*\) table restore(s).*/\1/p'
}
restored_in() { [ "$(grep -c 'table inet knockgw disappeared; installing it again' "$1")" -ge "$2" ]; }

table_of "$NS_S" >"$TMP/server-table.nft"
table_of "$NS_C" >"$TMP/client-table.nft"
check "before: ssh through the client role runs a command" ssh_ok before
check "before: a valid knock to 2222 gets SYN-ACK" knock_ok
check "before: a plain SYN to 2222 gets the closed-port RST" plain_refused
check "before: no table restore yet" [ "$(restores "$NS_S" "$TMP/server.conf")" = 0 ]

# 1. The server's table, deleted by name.
in_s nft delete table inet knockgw
check "server: the deletion is noticed and logged" wait_for 10 restored_in "$SLOG" 1
check "server: the table is back" wait_for 5 sh -c "ip netns exec $NS_S nft list table inet knockgw >/dev/null 2>&1"
table_of "$NS_S" >"$TMP/server-table2.nft"
check "server: exactly the table it had" diff -u "$TMP/server-table.nft" "$TMP/server-table2.nft"
check "server: knockgw status counts 1 table restore" \
	[ "$(restores "$NS_S" "$TMP/server.conf")" = 1 ]
check "server: a valid knock still gets SYN-ACK" knock_ok
check "server: a plain SYN still gets the closed-port RST" plain_refused
check "server: ssh still gets through" ssh_ok server-restored

# 2. The client's table: its SYNs would leave unknocked until it is back.
knocked=$(ccounter client_knocked)
in_c nft delete table inet knockgw
check "client: the deletion is noticed and logged" wait_for 10 restored_in "$CLOG" 1
check "client: the table is back" wait_for 5 sh -c "ip netns exec $NS_C nft list table inet knockgw >/dev/null 2>&1"
table_of "$NS_C" >"$TMP/client-table2.nft"
check "client: exactly the table it had" diff -u "$TMP/client-table.nft" "$TMP/client-table2.nft"
check "client: ssh is knocked again and gets through" ssh_ok client-restored
check "client: that connection was knocked" [ "$(ccounter client_knocked)" -gt "$knocked" ]
check "client: knockgw status counts 1 table restore" \
	[ "$(restores "$NS_C" "$TMP/client.conf")" = 1 ]

# 3. Everything in the server namespace flushed, twice in a row.
in_s nft flush ruleset
check "flush ruleset: noticed and restored" wait_for 10 restored_in "$SLOG" 2
in_s nft flush ruleset
check "flush ruleset again: noticed and restored" wait_for 10 restored_in "$SLOG" 3
check "flush ruleset: the table is back, exactly" \
	wait_for 5 sh -c "ip netns exec $NS_S nft list table inet knockgw 2>/dev/null |
		sed -e 's/counter packets [0-9]* bytes [0-9]* //' -e '/^# Warning/d' |
		diff -q - '$TMP/server-table.nft' >/dev/null"
check "server: knockgw status counts 3 table restores" \
	[ "$(restores "$NS_S" "$TMP/server.conf")" = 3 ]
check "after the flushes a valid knock gets SYN-ACK" knock_ok
check "after the flushes a plain SYN gets the closed-port RST" plain_refused
check "refused SYNs were counted" [ "$(counter syn_refused "$NS_S" "$SRV")" -ge 3 ]
check "no restore failed" sh -c "! grep -q 'cannot restore table' '$SLOG' '$CLOG'"
check "both daemons are still running" kill -0 "$SRV" "$CLI_PID"

# A clean stop leaves the table that was put back, hiding (on_stop hide).
kill "$SRV"
wait_for 10 sh -c "! kill -0 $SRV"
check "SIGTERM: the restored table stays, hiding" \
	sh -c "ip netns exec $NS_S nft list chain inet knockgw prerouting 2>/dev/null | grep -q 'ct state new .* accept'"
finish
