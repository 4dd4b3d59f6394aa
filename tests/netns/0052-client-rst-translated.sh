#!/bin/sh
# Every packet of a translated flow leaves translated, its RSTs too: when
# one end's socket is killed (ss -K: the kernel sends a RST), the other
# end's socket closes.  Both translation paths, the client role on the
# client itself (port 2200), the gateway client role on a router (port
# 2201, `from` = the client) and the gateway for a private address of the
# client, which the router's knockgw source-NATs (port 2202, a conntrack
# entry's NAT applies only to packets conntrack ties to it), v4 and v6,
# killing the client's socket and the server's.  On the user path conntrack once saw the client's packets with
# the kernel's sequence numbers and the server's acknowledgements with the
# knock's, called the client's RST invalid when its sequence number came
# before the server's last acknowledgement (for about every other shift),
# and it left untranslated: the server ignored it and its socket stayed
# open.  So each case of a killed client runs REPEAT (3) connections, each
# with its own shift (a killed server's, 2).
#
#   client ns $NS_C        router ns $NS_R                      server ns $NS_S
#   +-----------------+    +------------------------------+     +--------------------+
#   | vc 192.0.2.2    |----| rc 192.0.2.1  rs 203.0.113.1 |-----| vs 203.0.113.2     |
#   |  2001:db8:c::2  |    | 2001:db8:c::1  2001:db8:5::1 |     |  2001:db8:5::2     |
#   |  10.9.0.2       |    |  10.9.0.1      masquerade    |     | socat :2200, :2201,|
#   |  fd09::2        |    |  fd09::1       out of rs     |     |   :2202            |
#   | socat clients,  |    | knockgw: 2201 for 192.0.2.2, |     | knockgw protects   |
#   | knockgw: 2200   |    |   2202 for 10.9.0.2 (NAT)    |     |   them             |
#   +-----------------+    +------------------------------+     +--------------------+
# The server has no route to 10.9.0.0/24 or fd09::/64: only NAT'ed flows
# from there get answers.
. "$(dirname "$0")/lib/lib.sh"

make_router_topology
P4=10.9.0.2 P6=fd09::2
in_c ip addr add $P4/24 dev vc
in_c ip addr add $P6/64 dev vc nodad
in_r ip addr add 10.9.0.1/24 dev rc
in_r ip addr add fd09::1/64 dev rc nodad
# A nat chain in the namespace: without one the kernel applies no NAT at
# all, not even the one knockgw writes into a conntrack entry.
in_r nft -f - <<-EON
table inet gwnat {
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "rs" ip saddr 10.9.0.0/24 masquerade
		oifname "rs" ip6 saddr fd09::/64 masquerade
	}
}
EON
K=$(key_file k)
for port in 2200 2201 2202; do
	# Each connection is held open, read and never written to, until an
	# error (a RST, a killed socket) ends it.
	in_s socat -u TCP6-LISTEN:$port,ipv6only=0,reuseaddr,fork OPEN:/dev/null \
		>/dev/null 2>&1 &
	PIDS="$PIDS $!"
	listening $port
done
start_server "$(entry 2200), $(entry 2201), $(entry 2202)"
SRV_PID=$KGW_PID

# established NS PORT: how many established TCP sockets NS has with PORT at
# either end.
established() {
	ip netns exec "$1" ss -Htn state established "( sport = :$2 or dport = :$2 )" | wc -l
}

# closed_by_rst TAG PORT DST VICTIM [BIND]: a connection from the client
# (from address BIND) to DST's PORT (knocked, or the server would not have
# let it in), established at both ends; then VICTIM's (client or server)
# socket is killed, and the other end's socket must close.  Quiet when all
# is well; a failed step is one row.
closed_by_rst() {
	in_c timeout 60 socat -u "TCP:$3:$2${5:+,bind=$5}" OPEN:/dev/null >/dev/null 2>&1 &
	cpid=$!
	PIDS="$PIDS $cpid"
	wait_for 10 sh -c "[ \$(ip netns exec $NS_C ss -Htn state established \
		'( dport = :$2 )' | wc -l) = 1 ] && [ \$(ip netns exec $NS_S ss -Htn \
		state established '( sport = :$2 )' | wc -l) = 1 ]" || true
	if [ "$(established "$NS_C" "$2")" != 1 ] || [ "$(established "$NS_S" "$2")" != 1 ]; then
		not_ok "$1: the connection is established at both ends"
		return 1
	fi
	if [ "$4" = client ]; then
		killer=$NS_C other=$NS_S
		in_c ss -K -tn state established "( dport = :$2 )" >/dev/null
	else
		killer=$NS_S other=$NS_C
		in_s ss -K -tn state established "( sport = :$2 )" >/dev/null
	fi
	rc=0
	if [ "$(established "$killer" "$2")" != 0 ]; then
		not_ok "$1: ss -K killed the $4's socket"
		rc=1
	elif ! wait_for 5 sh -c "[ \$(ip netns exec $other ss -Htn state established \
		'( sport = :$2 or dport = :$2 )' | wc -l) = 0 ]"; then
		rc=1
	fi
	# Whatever is left of this connection goes before the next one.
	in_c ss -K -tn "( dport = :$2 )" >/dev/null 2>&1 || true
	in_s ss -K -tn "( sport = :$2 )" >/dev/null 2>&1 || true
	stop_pids "$cpid"
	return $rc
}

# rst_case TAG PORT DST VICTIM [BIND]: closed_by_rst REPEAT times (a
# killed client) or twice (a killed server), one row.
REPEAT=${REPEAT:-3}
rst_case() {
	n=0 times=2
	[ "$4" = server ] || times=$REPEAT
	for _ in $(seq $times); do
		if closed_by_rst "$@"; then n=$((n + 1)); fi
	done
	check "$1: the $4's RST closed the other end's socket ($n of $times connections)" \
		[ $n = $times ]
}

for kind in kernel user; do
	cat >"$TMP/client-$kind.conf" <<-EOC
	translate = "$kind";
	control_socket = "$TMP/client-$kind.sock";
	keys = ( { name = "k"; file = "$K"; } );
	knock = (
		{ dst = "$S4"; port = 2200; mode = "native"; key = "k"; },
		{ dst = "$S6"; port = 2200; mode = "native"; key = "k"; }
	);
	EOC
	cat >"$TMP/gw-$kind.conf" <<-EOC
	translate = "$kind";
	control_socket = "$TMP/gw-$kind.sock";
	keys = ( { name = "k"; file = "$K"; } );
	knock = (
		{ dst = "$S4"; port = 2201; mode = "native"; key = "k"; from = [ "$C4/32" ]; },
		{ dst = "$S6"; port = 2201; mode = "native"; key = "k"; from = [ "$C6/128" ]; },
		{ dst = "$S4"; port = 2202; mode = "native"; key = "k"; from = [ "$P4/32" ]; },
		{ dst = "$S6"; port = 2202; mode = "native"; key = "k"; from = [ "$P6/128" ]; }
	);
	EOC
	chmod 600 "$TMP/client-$kind.conf" "$TMP/gw-$kind.conf"
	start_knockgw "$NS_C" "$TMP/client-$kind.conf"
	CLI_PID=$KGW_PID
	start_knockgw "$NS_R" "$TMP/gw-$kind.conf"
	GW_PID=$KGW_PID
	for dst in $S4 $S6; do
		case $dst in
		*:*) fam=v6 cdst="[$dst]" private="[$P6]" ;;
		*) fam=v4 cdst=$dst private=$P4 ;;
		esac
		for victim in client server; do
			rst_case "$kind $fam client role, $victim killed" 2200 "$cdst" $victim
			rst_case "$kind $fam gateway, $victim killed" 2201 "$cdst" $victim
			rst_case "$kind $fam gateway NAT'ed, $victim killed" 2202 "$cdst" $victim \
				"$private"
		done
	done
	check "$kind: the client knocked its connections" \
		[ "$(ccounter client_knocked)" -ge $((2 * REPEAT + 4)) ]
	check "$kind: the router knocked the client's" \
		[ "$(counter client_knocked "$NS_R")" -ge $((4 * REPEAT + 8)) ]
	stop_knockgw "$CLI_PID"
	stop_knockgw "$GW_PID"
done

KGW_PID=$SRV_PID
check "the server's daemon stayed up" kill -0 "$SRV_PID"
finish
