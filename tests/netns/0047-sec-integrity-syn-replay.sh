#!/bin/sh
# A copy of a verified integrity connection's own SYN must not put it under
# check again.  Replay protection accepts a knock "from the same source"
# (a retransmission); an attacker who captured the SYN and sends it from
# the client's address on another link is that same source.  On the old
# code, once the flow was done the copy started the check anew on the
# established conntrack entry: the client's next data was held until the
# timeout and the connection reset.
#   - ssh through knock-connect (integrity_len 20) runs a session that
#     echoes 16 lines, one every 0.4 s; the attacker's namespace, on a link
#     of its own, is handed the session's SYN (captured on the client's
#     link) and sends 8 copies of it, spoofing the client's address, once
#     the session is under way: all 16 lines come back, IPv4 and IPv6
#     (integrity_timeout is 2 s: on the old code the session died within
#     the 6 s it lasts);
#   - a raw client (mitm.py) sends its 20 verified bytes, waits until
#     their flow is done and forgotten (3.2 s), sends its own SYN again,
#     then more bytes, and more again after the timeout would have struck:
#     all acked, no reset, and read by the sink, IPv4 and IPv6.
#
#   client ns $NS_C        server ns $NS_S               attacker ns $NS_A
#   +-----------------+    +------------------------+    +-------------------+
#   | vc 192.0.2.1    |    | vs 192.0.2.2           |    | va 198.51.100.2   |
#   |    2001:db8::1  |----|    2001:db8::2         |    |    2001:db8:a::2  |
#   | ssh, knock-     |    | sa 198.51.100.1        |----| synreplay.py:     |
#   | connect, client |    |    2001:db8:a::1       |    | sends as          |
#   | knockgw, mitm.py|    | sshd :22, sink :2200   |    | 192.0.2.1 and     |
#   | synreplay.py    |    | (integrity_len 20),    |    | 2001:db8::1       |
#   | (captures)      |    | knockgw, rp_filter off |    |                   |
#   +-----------------+    +------------------------+    +-------------------+
. "$(dirname "$0")/lib/lib.sh"

NS_A=$PFX-a
in_a() { ip netns exec "$NS_A" "$@"; }
REPLAY="python3 $TOP/tests/netns/lib/synreplay.py"

make_topology
quiet_client_rsts
ip netns add "$NS_A"
ip -n "$NS_A" link set lo up
ip link add va netns "$NS_A" type veth peer name sa netns "$NS_S"
in_s ip addr add 198.51.100.1/24 dev sa
in_s ip addr add 2001:db8:a::1/64 dev sa nodad
in_a ip addr add 198.51.100.2/24 dev va
in_a ip addr add 2001:db8:a::2/64 dev va nodad
in_s ethtool -K sa rx off tx off >/dev/null
in_a ethtool -K va rx off tx off >/dev/null
in_s ip link set sa up
in_a ip link set va up
in_a ip route add default via 198.51.100.1
in_a ip -6 route add default via 2001:db8:a::1
# The spoofed copies come in on the attacker's link: no reverse-path filter.
for dev in all default sa vs; do
	in_s sysctl -qw net.ipv4.conf.$dev.rp_filter=0
done
wait_for 5 in_a ping -c1 -W1 198.51.100.1
wait_for 5 in_a ping -6 -c1 -W1 2001:db8:a::1

start_sshd
start_sink 2200
K=$(key_file k)
knock_conf "$TMP/client.conf" "integrity_len = 20;"
start_knockgw "$NS_C" "$TMP/client.conf"
start_server "$(entry 22 "integrity_len = 20;"), $(entry 2200 "integrity_len = 20;")" \
	"limits = { integrity_timeout = 2; };"

SSH="ssh $SSH_OPTS -o ConnectTimeout=10"
PROXY="ProxyCommand=$KC -s $TMP/client.sock -w 10 %h %p"

# lines N: N lines "lineI", 0.3 s apart.
lines() {
	l_i=1
	while [ "$l_i" -le "$1" ]; do
		echo "line$l_i"
		sleep 0.4
		l_i=$((l_i + 1))
	done
}
echoed() { grep -c '^echo:line' "$1" || true; }

for fam in 4 6; do
	if [ $fam = 4 ]; then dst=$S4; else dst=$S6; fi
	rm -f "$TMP/syn$fam" "$TMP/cap$fam.ready" "$TMP/go$fam"
	out=$TMP/echo$fam.out
	: >"$out"
	# shellcheck disable=SC2086 # commands with their options
	in_c $REPLAY capture --iface vc --dport 22 --out "$TMP/syn$fam" \
		--ready "$TMP/cap$fam.ready" --timeout 20 &
	CAP=$!
	wait_for 5 test -e "$TMP/cap$fam.ready"
	# shellcheck disable=SC2086 # commands with their options
	in_a $REPLAY replay --in "$TMP/syn$fam" --after "$TMP/go$fam" --count 8 \
		--interval 0.3 --timeout 30 >"$TMP/replay$fam.txt" 2>&1 &
	REP=$!
	# Once the second line came back the bytes are verified and acknowledged.
	( wait_for 20 grep -q '^echo:line2' "$out" && touch "$TMP/go$fam" ) &
	WAITER=$!
	live0=$(counter integ_syn_live)
	# shellcheck disable=SC2086 # commands with their options
	lines 16 | in_c timeout 40 $SSH -o "$PROXY" root@"$dst" 'sed -u "s/^/echo:/"' \
		>"$out" 2>"$TMP/ssh$fam.err" || true
	wait "$CAP" || true
	wait "$REP" || true
	wait "$WAITER" || true
	echo "# IPv$fam: $(echoed "$out") of 16 lines back; copies sent of: $(cat "$TMP/replay$fam.txt")"
	check "IPv$fam: the session's SYN was captured and sent again from the attacker's link" \
		grep -q "^$fam " "$TMP/replay$fam.txt"
	check "IPv$fam: an ssh session through knock-connect survives copies of its SYN (16 lines)" \
		[ "$(echoed "$out")" = 16 ]
	[ "$(echoed "$out")" = 16 ] || cat "$TMP/ssh$fam.err"
	live=$(counter integ_syn_live)
	check "IPv$fam: the daemon dropped the copies as SYNs of a connection past its handshake" \
		[ "${live:-0}" -gt "${live0:-0}" ]
done

# The raw client: its own SYN again after the acknowledgement, then more.
SPORT=46000
for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
	printf 'VERIFIED-BYTES-%s-020' "$fam" | head -c 20 >"$TMP/first$fam"
	printf 'AFTER-THE-SYN-COPY-%s' "$fam" >"$TMP/more$fam"
	printf 'AFTER-THE-TIMEOUT-%s' "$fam" >"$TMP/later$fam"
	SPORT=$((SPORT + 1))
	r_isn=$(isn native "$K" "$dst" 2200 9000$fam --integrity-len 20 --payload-file "$TMP/first$fam")
	# shellcheck disable=SC2086 # commands with their options
	in_c $MITM send --iface vc --src "$src" --dst "$dst" --sport $SPORT --dport 2200 \
		--isn "0x$r_isn" --tsval 9000$fam --timeout 9 --step "ok:$TMP/first$fam" \
		--step wait:3.2 --step syn:- --step wait:0.3 --step "more:$TMP/more$fam" \
		--step wait:3.5 --step "more:$TMP/later$fam" >"$TMP/raw$fam.json"
	want=$((20 + $(wc -c <"$TMP/more$fam") + $(wc -c <"$TMP/later$fam")))
	check "IPv$fam: a raw client's bytes after its own SYN again are acked ($want)" \
		acked_bytes raw$fam "$want"
	check "IPv$fam: ... and not reset" sh -c "! grep -q '\"rst\": true' '$TMP/raw$fam.json'"
	check "IPv$fam: ... and the service read them" \
		wait_for 5 grep -q "AFTER-THE-SYN-COPY-$fam.*AFTER-THE-TIMEOUT-$fam" "$TMP/sink.bin"
done

check "no integrity flow timed out" [ "$(counter integ_timeout)" = 0 ]
check "the daemon is still running" kill -0 "$KGW_PID"
finish
