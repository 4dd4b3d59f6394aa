#!/bin/sh
# Other users of the packet mark must not make knockgw skip a check.  Another
# table in the server namespace (as Calico or a policy-routing setup would)
# marks incoming packets:
#   1. every packet to sshd with what once was knockgw's "flagged" value
#      (0x4c000000) and, in a second round, with today's integrity code: a
#      plain SYN must still get the closed-port RST (the old rules accepted a
#      SYN on that mark alone, before any knock check);
#   2. the client's segments of an integrity flow with what once was the
#      "release" value (0x4d000000): the attacker's bytes must still be
#      checked (the old rules cleared the flow's flag on that mark and let
#      them through);
#   3. with rules.mark_mask and rules.ct_mark_bit moved out of the way of a
#      marker that owns the upper half of the mark, knocks and integrity
#      flows work and the marker's bits are left as they were.
#
#   client ns $NS_C                 server ns $NS_S
#   +-----------------+             +--------------------------------------+
#   | prober, mitm.py |--- veth ----| table inet marker (prerouting -300)  |
#   +-----------------+             | sshd :22, sink :2200 (integrity 16)  |
#                                   | knockgw                              |
#                                   +--------------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
start_sink 2200
K=$(key_file k)
printf 'GOOD-BYTES-00016' >"$TMP/good"
printf 'EVILDATA-0000016' >"$TMP/evil"

serve() { # RULES: the daemon started with the rules group's settings RULES
	start_server "$(entry 22 "replay = false;"), $(entry 2200 "integrity_len = 16; replay = false;")" \
		"rules = { $1 };"
}
marker() { # PORT STATEMENT: another table marks what comes in for PORT
	in_s nft delete table inet marker 2>/dev/null || true
	in_s nft -f - <<-EOR
	table inet marker {
		chain pre {
			type filter hook prerouting priority -300; policy accept;
			tcp dport $1 $2
		}
	}
	EOR
}
SPORT=46000
send_integ() { # OUT FILE: knock for the good bytes, send FILE's
	SPORT=$((SPORT + 1))
	v=$(isn native "$K" $S4 2200 $SPORT --integrity-len 16 --payload-file "$TMP/good")
	in_c $MITM send --iface vc --src $C4 --dst $S4 --sport $SPORT --dport 2200 --isn "0x$v" \
		--tsval $SPORT --timeout 3 --step "ok:$2" >"$TMP/$1.json"
}

serve ""
for value in 0x4c000000 0x01000000; do
	marker 22 "meta mark set $value"
	check "SYNs marked $value by another table: a plain SYN gets the closed-port RST" plain_gets RA
	check "... and a valid knock passes" knock_gets SA
done

marker 2200 "meta mark set 0x4d000000"
send_integ evil "$TMP/evil"
check "segments marked 0x4d000000 by another table: the wrong bytes still reset" got_rst evil
check "... and the service never read them" sink_lacks EVILDATA
send_integ good "$TMP/good"
check "... while the right bytes are acked" acked_bytes good 16
stop_knockgw

# The marker owns the upper half, as Calico does; knockgw moves below it.
serve "mark_mask = 0x0000ff00; ct_mark_bit = 0x00000001;"
in_s nft delete table inet marker
in_s nft -f - <<-EOR
table inet marker {
	chain pre {
		type filter hook prerouting priority -300; policy accept;
		meta mark set meta mark | 0x4c4d0000
	}
	chain in {
		type filter hook input priority 100; policy accept;
		tcp dport 2200 meta mark & 0xffff0000 == 0x4c4d0000 counter
	}
}
EOR
check "moved bits: the rules use them" \
	sh -c "ip netns exec $NS_S nft list table inet knockgw 2>/dev/null | grep -q '0x0000ff00 == 0x00000100'"
check "moved bits: a plain SYN gets the closed-port RST" plain_gets RA
check "moved bits: a valid knock passes" knock_gets SA
send_integ good2 "$TMP/good"
check "moved bits: an integrity flow's right bytes are acked" acked_bytes good2 16
check "... and read by the service" wait_for 5 grep -q "GOOD-BYTES" "$TMP/sink.bin"
send_integ evil2 "$TMP/evil"
check "moved bits: wrong bytes reset" got_rst evil2
marked_in() { # packets to 2200 that reached the input hook with the marker's bits
	in_s nft list chain inet marker in | grep -o 'packets [0-9]*' | awk '{ print $2 }'
}
check "moved bits: the other table's bits survived knockgw's verdicts" \
	[ "$(marked_in)" -gt 0 ]
check "the daemon is still running" kill -0 "$KGW_PID"
finish
