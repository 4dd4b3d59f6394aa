#!/bin/sh
# Urgent data and FINs against integrity mode.  Linux takes the urgent byte
# out of the stream (no SO_OOBINLINE): with URG set and the pointer inside
# the checked range, the service read 19 of the verified bytes and one
# from past the range that nobody verified (the old code let it through:
# the bytes were right).  A man in the middle can set URG without touching
# the data, and a bare ACK can carry the pointer before any data.  Now an
# urgent pointer into the range resets the flow, and the service reads
# nothing; one past the range is the client's business and passes.  A FIN
# inside the range ends the stream before the bytes the ISN covers: reset
# too; one at the range's end waits with the bytes and passes after them.
#
#   client ns $NS_C                      server ns $NS_S
#   +----------------------+             +------------------------------------+
#   | mitm.py (raw)        |---- veth ---| sink.py :2200 (keeps every byte),  |
#   |                      |             |   integrity_len 20; knockgw        |
#   +----------------------+             +------------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sink 2200
K=$(key_file k)
start_server "$(entry 2200 "integrity_len = 20;")" "limits = { integrity_timeout = 2; };"

SPORT=47000
# attack NAME KNOCKFILE STEP...: knock for KNOCKFILE's first 20 bytes, then
# the steps (HOW:ARG, see mitm.py).
attack() {
	a_name=$1 a_knock=$2
	shift 2
	SPORT=$((SPORT + 1))
	a_isn=$(isn native "$K" "$S_DST" 2200 3000$fam --integrity-len 20 --payload-file "$a_knock")
	a_steps=""
	for s in "$@"; do a_steps="$a_steps --step $s"; done
	# shellcheck disable=SC2086
	in_c $MITM send --iface vc --src "$C_SRC" --dst "$S_DST" --sport $SPORT --dport 2200 \
		--isn "0x$a_isn" --tsval 3000$fam --timeout 3 $a_steps >"$TMP/$a_name.json"
}
sink_has() { grep -q "$1" "$TMP/sink.bin"; }
sink_size() { wc -c <"$TMP/sink.bin"; }
# read_nothing SIZE: after a moment for the service to read (0.3 s), the
# sink holds no more than SIZE bytes; if it does, says what came.
read_nothing() {
	sleep 0.3
	[ "$(sink_size)" = "$1" ] && return 0
	echo "# the service read: $(tail -c +$(($1 + 1)) "$TMP/sink.bin")"
	return 1
}
not_reset() { ! got_rst "$1"; }

for fam in 4 6; do
	if [ $fam = 4 ]; then C_SRC=$C4 S_DST=$S4; else C_SRC=$C6 S_DST=$S6; fi
	# Each row's first 20 bytes differ, so the sink tells them apart; the
	# row's name comes after the byte an urgent pointer 5 takes out.
	for row in urg ack fin late past; do
		printf 'CHECKED-%s-%s-=========' "$row" "$fam" | head -c 20 >"$TMP/$row$fam"
	done
	printf 'AFTER-THE-RANGE-%s' "$fam" >"$TMP/after$fam"

	size=$(sink_size)
	attack urg$fam "$TMP/urg$fam" "urg5:$TMP/urg$fam" "more:$TMP/after$fam"
	check "IPv$fam: the right bytes with an urgent pointer into them: reset" got_rst urg$fam
	check "IPv$fam: ... and the service read nothing of them or what followed" \
		read_nothing "$size"

	size=$(sink_size)
	attack ack$fam "$TMP/ack$fam" urgack:9 "ok:$TMP/ack$fam" "more:$TMP/after$fam"
	check "IPv$fam: the handshake's ACK with an urgent pointer into the range: reset" \
		got_rst ack$fam
	check "IPv$fam: ... and the service read nothing" read_nothing "$size"

	size=$(sink_size)
	attack fin$fam "$TMP/fin$fam" finat:10 "ok:$TMP/fin$fam"
	check "IPv$fam: a FIN inside the range: reset" got_rst fin$fam
	check "IPv$fam: ... and the service read nothing" read_nothing "$size"

	# What a client may do: a FIN at the range's end before the bytes, and
	# an urgent pointer past the range.
	attack late$fam "$TMP/late$fam" finat:20 "ok:$TMP/late$fam"
	check "IPv$fam: a FIN at the range's end, before the bytes: bytes and FIN acked" \
		acked_bytes late$fam 21
	check "IPv$fam: ... not reset" not_reset late$fam
	check "IPv$fam: ... and read" wait_for 5 sink_has "CHECKED-late-$fam-====="
	cat "$TMP/past$fam" "$TMP/after$fam" >"$TMP/pastall$fam"
	attack past$fam "$TMP/past$fam" "urg30:$TMP/pastall$fam"
	check "IPv$fam: an urgent pointer past the range: acked" \
		acked_bytes past$fam "$(wc -c <"$TMP/pastall$fam")"
	check "IPv$fam: ... not reset" not_reset past$fam
	check "IPv$fam: ... and the range read whole" wait_for 5 sink_has "CHECKED-past-$fam-====="
done

check "urgent pointers counted" [ "$(counter integ_urgent)" = 4 ]
check "FINs inside the range counted" [ "$(counter integ_early_fin)" = 2 ]
check "the daemon is still running" kill -0 "$KGW_PID"
finish
