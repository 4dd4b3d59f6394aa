#!/bin/sh
# Attacks on integrity mode by someone who can send as the client (a man in
# the middle, or a lucky guess of the 16-bit check):
#   - the right first bytes sent so that the service's TCP drops them after
#     the daemon let them through (a stale timestamp: PAWS; an unexpected
#     TCP-MD5 option), then the attacker's own bytes for the same range: the
#     service must never read them, and the flow is reset;
#   - a client whose first copy was dropped that way and who sends the same
#     bytes again is served (the copy matches what was verified);
#   - a knock that passes the 16-bit check followed by other bytes (what a
#     guess that hit gets): the flow is reset and the service's first bytes
#     (sshd's banner, sent at accept) never reach the guesser;
#   - data in the SYN (TCP Fast Open, the server configured to take it
#     without a cookie) is refused like a closed port: the service never
#     reads it.
#
#   client ns $NS_C                      server ns $NS_S
#   +----------------------+             +-------------------------------------+
#   | mitm.py (raw)        |---- veth ---| sink.py :2200 (keeps every byte),   |
#   |                      |             |   integrity_len 16; sshd :22,       |
#   +----------------------+             |   integrity_len 16; knockgw         |
#                                        +-------------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
start_sink 2200
# TCP Fast Open for every listener, no cookie needed: a SYN's data goes
# straight to the service once the SYN is accepted.
in_s sysctl -qw net.ipv4.tcp_fastopen=0x602

K=$(key_file k)
INTEG="integrity_len = 16; replay = false;"
start_server "$(entry 2200 "$INTEG"), $(entry 22 "$INTEG")" "limits = { integrity_timeout = 3; };"

SPORT=42000
# attack NAME DPORT KNOCKFILE STEP...: knock for KNOCKFILE's first 16 bytes,
# then send the steps (HOW:FILE, see mitm.py).
attack() {
	a_name=$1 a_port=$2 a_knock=$3
	shift 3
	SPORT=$((SPORT + 1))
	a_isn=$(isn native "$K" $S_DST "$a_port" 70000 --integrity-len 16 --payload-file "$a_knock")
	a_steps=""
	for s in "$@"; do a_steps="$a_steps --step $s"; done
	# shellcheck disable=SC2086
	in_c $MITM send --iface vc --src $C_SRC --dst $S_DST --sport $SPORT --dport "$a_port" \
		--isn "0x$a_isn" --tsval 70000 --wait "${WAIT:-0}" --timeout 4 $a_steps \
		>"$TMP/$a_name.json"
}
server_said() { json "$TMP/$1.json" "bytes.fromhex(j['server_bytes']).decode('latin-1')"; }
sink_has() { grep -q "$1" "$TMP/sink.bin"; }
banner_came() { server_said "$1" | grep -q '^SSH-2.0-'; }

for fam in 4 6; do
	if [ $fam = 4 ]; then C_SRC=$C4 S_DST=$S4; else C_SRC=$C6 S_DST=$S6; fi
	printf 'GOOD-BYTES-%s-0016' "$fam" | head -c 16 >"$TMP/good$fam"
	printf 'EVILDATA%s-000016' "$fam" | head -c 16 >"$TMP/evil$fam"

	attack paws$fam 2200 "$TMP/good$fam" "paws:$TMP/good$fam" "ok:$TMP/evil$fam"
	check "IPv$fam: stale-timestamp copy, then other bytes: reset" got_rst paws$fam
	attack md5$fam 2200 "$TMP/good$fam" "md5:$TMP/good$fam" "ok:$TMP/evil$fam"
	check "IPv$fam: TCP-MD5-optioned copy, then other bytes: reset" got_rst md5$fam
	check "IPv$fam: the service never read the attacker's bytes" sink_lacks EVILDATA$fam

	attack again$fam 2200 "$TMP/good$fam" "paws:$TMP/good$fam" "ok:$TMP/good$fam"
	check "IPv$fam: the same bytes again after a dropped copy: acked" acked_bytes again$fam 16
	check "IPv$fam: ... and read by the service" wait_for 5 sink_has "GOOD-BYTES-$fam"

	WAIT=1.5
	attack guess$fam 22 "$TMP/good$fam" "ok:$TMP/evil$fam"
	WAIT=0
	check "IPv$fam: a guessed knock with other bytes: reset" got_rst guess$fam
	check "IPv$fam: ... and sshd's banner never reached the guesser" \
		[ -z "$(server_said guess$fam)" ]

	attack banner$fam 22 "$TMP/good$fam" "ok:$TMP/good$fam"
	check "IPv$fam: with the right bytes the banner comes" banner_came banner$fam

	printf 'TFO-DATA-IN-SYN%s' "$fam" >"$TMP/tfo$fam"
	SPORT=$((SPORT + 1))
	t_isn=$(isn native "$K" $S_DST 2200 80000 --integrity-len 16 --payload-file "$TMP/tfo$fam")
	in_c $MITM syndata --iface vc --src $C_SRC --dst $S_DST --sport $SPORT --dport 2200 \
		--isn "0x$t_isn" --tsval 80000 --data-file "$TMP/tfo$fam" >"$TMP/tfo$fam.json"
	check "IPv$fam: data in a knock SYN (TCP Fast Open): closed-port RST" \
		[ "$(json "$TMP/tfo$fam.json" "j['answer']")" = RA ]
	check "IPv$fam: ... and the service never read it" sink_lacks TFO-DATA
done

check "conflicts counted" [ "$(counter integ_conflict)" -ge 4 ]
check "TCP Fast Open knocks counted" [ "$(counter integ_syn_data)" = 2 ]
check "the daemon is still running" kill -0 "$KGW_PID"
# Resets of connections that had no socket (any more) must never abort the
# service's listening socket, which the kernel's lookup falls back to.
check "sshd's listening socket was never aborted" \
	sh -c "! grep -q 'accept: Invalid argument' '$TMP/sshd.log'"
finish
