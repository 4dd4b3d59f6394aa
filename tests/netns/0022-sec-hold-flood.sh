#!/bin/sh
# Held segments must not fill the queue.  One valid integrity knock,
# replayed from its own address (which replay protection allows: a
# retransmission) on 128 source ports, each connection followed by 32 small
# segments that never complete the integrity bytes: on the old code they
# were all held, 4096 packets, the whole queue (queue.maxlen 4096), and
# every valid knock from anyone got nothing until they timed out.  Now one
# source holds at most its share, the queue stays well under its length,
# and another client's knock passes meanwhile, on both addresses.
#
#   client ns $NS_C                        server ns $NS_S
#   +-------------------------+            +---------------------------------+
#   | vc 192.0.2.1 (attacker) |--- veth ---| sink.py :2200, integrity_len 16 |
#   |    192.0.2.3 (a user)   |            | knockgw, queue.maxlen 4096      |
#   +-------------------------+            +---------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
U4=192.0.2.3
U6=2001:db8::3
in_c ip addr add $U4/24 dev vc
in_c ip addr add $U6/64 dev vc nodad
start_sink 2200

K=$(key_file k)
start_server "$(entry 2200 "integrity_len = 16;")" "queue = { maxlen = 4096; };" \
	"limits = { integrity_timeout = 20; };"

printf 'attacker-bytes-0016' | head -c 16 >"$TMP/att.data"
SPORT=44000
for fam in 4 6; do
	if [ $fam = 4 ]; then A=$C4 U=$U4 D=$S4; else A=$C6 U=$U6 D=$S6; fi
	a_isn=$(isn native "$K" $D 2200 5000$fam --integrity-len 16 --payload-file "$TMP/att.data")
	in_c $MITM hold --iface vc --src $A --dst $D --dport 2200 \
		--sport-base $((44000 + fam * 200)) --isn "0x$a_isn" --tsval 5000$fam --flows 128 \
		--segs 32 --skip 16 --timeout 5 >"$TMP/flood$fam.json"
	check "IPv$fam: the replayed knock opened 128 connections" \
		[ "$(json "$TMP/flood$fam.json" "j['synacks']")" = 128 ]

	printf 'USER-%s-BYTES-016' "$fam" | head -c 16 >"$TMP/user$fam.data"
	SPORT=$((SPORT + 1))
	u_isn=$(isn native "$K" $D 2200 6000$fam --integrity-len 16 --payload-file "$TMP/user$fam.data")
	in_c $PROBER connect --iface vc --src $U --dst $D --sport $SPORT --dport 2200 \
		--isn "0x$u_isn" --tsval 6000$fam --data-file "$TMP/user$fam.data" --timeout 4 \
		--stop-when-acked >"$TMP/user$fam.json"
	check "IPv$fam: meanwhile another client's knock passes and its bytes are acked" \
		acked_bytes user$fam 16
	check "IPv$fam: ... and the service read them" \
		wait_for 5 grep -q "USER-$fam-BYTES" "$TMP/sink.bin"
done

check "the attacker's segments beyond its share were refused (source_cap)" \
	[ "$(counter source_cap)" -ge 3000 ]
check "the service never read an attacker's byte" sh -c "! grep -q x '$TMP/sink.bin'"
check "the daemon is still running" kill -0 "$KGW_PID"
finish
