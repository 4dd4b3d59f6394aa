#!/bin/sh
# Server role, integrity mode: the first integrity_len bytes must match the
# hash in the ISN before sshd may read any of them.  Right bytes in one
# segment, split, or reordered get through; bytes tampered on the wire by an
# nft payload rule, or sent wrong by the client, reset the connection and
# sshd never logs them; a flow that sends nothing is reset after the timeout.
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)
start_server "$(entry 22 "integrity_len = 16;")" "limits = { integrity_timeout = 2; };"

SPORT=41000
# connect NAME BANNER [prober args]: knock for BANNER, then send BANNER.
connect() {
	c_name=$1
	printf '%s\r\n' "$2" >"$TMP/$c_name.data"
	shift 2
	SPORT=$((SPORT + 1))
	c_isn=$(isn native "$K" $C_DST 22 4242 --integrity-len 16 --payload-file "$TMP/$c_name.data")
	[ -n "${SEND_FILE:-}" ] && cp "$SEND_FILE" "$TMP/$c_name.data"
	in_c $PROBER connect --iface vc --src $C_SRC --dst $C_DST --sport $SPORT --dport 22 \
		--isn "0x$c_isn" --tsval 4242 --data-file "$TMP/$c_name.data" --timeout 3 \
		--stop-when-acked "$@" >"$TMP/$c_name.json"
}
acked() { acked_bytes "$1" "$(wc -c <"$TMP/$1.data")"; }
was_reset() { got_rst "$1" && ! acked "$1"; }
sshd_saw() { grep -q "remote software version $1" "$TMP/sshd.log"; }

for fam in 4 6; do
	if [ $fam = 4 ]; then C_SRC=$C4 C_DST=$S4; else C_SRC=$C6 C_DST=$S6; fi
	connect one$fam "SSH-2.0-OneSegment$fam"
	check "IPv$fam: right bytes in one segment are acked" acked one$fam
	check "IPv$fam: sshd read them" wait_for 5 sshd_saw "OneSegment$fam"

	connect split$fam "SSH-2.0-ThreeSegments$fam" --split 5,12
	check "IPv$fam: right bytes in three segments are acked" acked split$fam
	check "IPv$fam: sshd read them" wait_for 5 sshd_saw "ThreeSegments$fam"

	connect reorder$fam "SSH-2.0-Reordered_ab$fam" --split 3,9,15 --order 3,1,0,2
	check "IPv$fam: right bytes out of order are acked" acked reorder$fam
	check "IPv$fam: sshd read them" wait_for 5 sshd_saw "Reordered_ab$fam"

	# The first integrity_len (16) bytes of each banner differ between tests.
	# The client knocks for one banner and sends another (as a man in the
	# middle would, with correct checksums).
	printf 'SSH-2.0-ForgedBanner%s\r\n' "$fam" >"$TMP/forged.data"
	SEND_FILE=$TMP/forged.data connect forged$fam "SSH-2.0-OriginalBanner$fam"
	check "IPv$fam: other bytes than the ISN covers: reset, nothing acked" was_reset forged$fam

	# Tampered on the wire: the first payload byte of each segment.
	tamper_first_byte 22
	connect tamper$fam "SSH-2.0-TamperedOn$fam"
	untamper
	check "IPv$fam: bytes tampered on the wire: reset, nothing acked" was_reset tamper$fam
done

# Nothing after the handshake: the daemon resets the flow after 2 s.
C_SRC=$C4 C_DST=$S4
: >"$TMP/empty.data"
SPORT=$((SPORT + 1))
v=$(isn native "$K" $S4 22 9 --integrity-len 16 --payload-file "$TMP/one4.data")
in_c $PROBER connect --iface vc --src $C4 --dst $S4 --sport $SPORT --dport 22 --isn "0x$v" \
	--tsval 9 --data-file "$TMP/empty.data" --timeout 5 >"$TMP/silent.json"
check "a flow that never sends its bytes is reset" got_rst silent

sleep 0.5
check "sshd never read a forged or tampered banner" \
	sh -c "! grep -E 'ForgedBanner|OriginalBanner|TamperedOn|XSH-2.0' '$TMP/sshd.log'"
check "integrity successes counted" [ "$(counter integ_ok)" = 6 ]
check "integrity failures counted" [ "$(counter integ_fail)" = 4 ]
check "the timeout counted" [ "$(counter integ_timeout)" = 1 ]
finish
