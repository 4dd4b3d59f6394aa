#!/bin/sh
# Segments of no connection conntrack knows must not reach a protected
# service unseen (on_fail "reset"):
#   - SYN cookies always on (tcp_syncookies = 2): the SYN-ACK's ISN is a
#     cookie, and an ACK that carries it opens the connection by itself.
#     After the conntrack entry is gone (flushed here, as an attacker who
#     guesses a cookie never had one), that ACK alone reached sshd on the old
#     code, which opened the connection and sent its banner; now it gets the
#     closed-port RST;
#   - an integrity flow whose conntrack entry is lost before its bytes are
#     checked: on the old code the next segments carried no flag and reached
#     the service unchecked (the attacker's bytes were read); now the flow
#     is reset and nothing is read.
#
#   client ns $NS_C                 server ns $NS_S
#   +-----------------+             +-------------------------------------+
#   | mitm.py (raw)   |--- veth ----| sshd :22 (auth only), sink :2200    |
#   +-----------------+             | (integrity_len 16), knockgw         |
#                                   +-------------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
start_sink 2200
in_s sysctl -qw net.ipv4.tcp_syncookies=2
K=$(key_file k)
start_server "$(entry 22 "replay = false;"), $(entry 2200 "integrity_len = 16; replay = false;")"
: >"$TMP/empty"
printf 'GOOD-BYTES-00016' >"$TMP/good"
printf 'EVILDATA-0000016' >"$TMP/evil"

# flushed_midway OUT MITM-ARGS...: mitm.py send in the background, conntrack
# flushed in the server namespace once its handshake is done, while it waits
# (--wait 1.5) before its data; its JSON in $TMP/OUT.json.
flushed_midway() {
	f_out=$1
	shift
	rm -f "$TMP/$f_out.hs"
	in_c $MITM send --iface vc --wait 1.5 --timeout 4 --handshake-file "$TMP/$f_out.hs" \
		"$@" >"$TMP/$f_out.json" &
	f_pid=$!
	wait_for 4 test -e "$TMP/$f_out.hs"
	in_s conntrack -F >/dev/null 2>&1
	wait $f_pid
}

for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi

	v=$(isn native "$K" $dst 22 900$fam)
	flushed_midway cookie$fam --src $src --dst $dst --sport 4510$fam --dport 22 \
		--isn "0x$v" --tsval 900$fam --late-ack --step "ok:$TMP/empty"
	check "IPv$fam: the knocked SYN got its cookie SYN-ACK" \
		[ "$(json "$TMP/cookie$fam.json" "j['synack']")" = SA ]
	check "IPv$fam: its ACK, with conntrack's entry gone, gets the closed-port RST" \
		got_rst cookie$fam
	check "IPv$fam: ... and sshd never answered it (no banner)" \
		[ -z "$(json "$TMP/cookie$fam.json" "j['server_bytes']")" ]

	v=$(isn native "$K" $dst 2200 910$fam --integrity-len 16 --payload-file "$TMP/good")
	flushed_midway lost$fam --src $src --dst $dst --sport 4520$fam --dport 2200 \
		--isn "0x$v" --tsval 910$fam --step "ok:$TMP/evil"
	check "IPv$fam: an integrity flow conntrack lost is reset" got_rst lost$fam
	check "IPv$fam: ... and the service never read the bytes sent after the loss" \
		sink_lacks EVILDATA
done
check "segments of no connection counted" [ "$(counter noconn)" -ge 2 ]
check "lost integrity flows counted" [ "$(counter integ_lost)" = 2 ]
check "sshd's listener still accepts" sh -c "! grep -q 'accept: Invalid argument' '$TMP/sshd.log'"
finish
