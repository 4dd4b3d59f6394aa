#!/bin/sh
# A knocked SYN answered by an ICMP error fails at once, as a plain one
# does.  The server's firewall rejects the client (as fail2ban's `reject`
# does): its ICMP/ICMPv6 destination unreachable quotes the SYN as it left,
# with the knock ISN, and the client's TCP takes it only once knockgw has
# put the kernel's ISN back; otherwise it drops it as out of window and
# retries until its SYN timeout.  connect() on a knocked port must fail
# with the errno a plain connect to an equally rejected port gets
# (ECONNREFUSED for port unreachable, EHOSTUNREACH for host unreachable):
# both client roles (the router's own connect, and the client host's
# routed through it), v4 and v6, kernel path and translate = "user".
# tcp_syn_retries = 2 in the connecting namespaces bounds the old failure
# (a timeout after some seconds) without any timing threshold: the errno
# tells the two apart.
#
#   client $NS_C         router $NS_R                          server $NS_S
#   +---------------+    +-------------------------------+     +-----------------------+
#   | vc 192.0.2.2  |----| rc 192.0.2.1   rs 203.0.113.1 |-----| vs 203.0.113.2        |
#   | 2001:db8:c::2 |    | knockgw: knock 22 and 24 for  |     | reject 22, 23: port   |
#   | connect()     |    | itself and from the client    |     |   unreachable         |
#   +---------------+    | connect()                     |     | reject 24, 25: host   |
#                        +-------------------------------+     |   unreachable         |
#                                                              +-----------------------+
. "$(dirname "$0")/lib.sh"

make_router_topology
for ns in "$NS_C" "$NS_R"; do
	ip netns exec "$ns" sysctl -qw net.ipv4.tcp_syn_retries=2
done
in_s nft -f - <<EOF
table inet fail2ban_like {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport { 22, 23 } reject with icmpx port-unreachable
		tcp dport { 24, 25 } reject with icmpx host-unreachable
	}
}
EOF
K=$(key_file k)

# connect_errno NS DST PORT: the errno name a blocking connect() from NS
# ends with (OK if it connects), bounded by the SYN retries and a timeout.
connect_errno() {
	ip netns exec "$1" timeout 60 python3 -c '
import errno, socket, sys
dst, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET)
try:
    s.connect((dst, port))
    print("OK")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
' "$2" "$3" 2>&1 || echo "timeout"
}

router_conf() {
	cat >"$1" <<EOC
translate = "$2";
control_socket = "$TMP/r-$2.sock";
keys = ( { name = "k"; file = "$K"; } );
knock = (
	{ dst = "$S4"; port = 22; mode = "native"; key = "k"; from = [ "$C4/32", "$C6/128" ]; },
	{ dst = "$S6"; port = 22; mode = "native"; key = "k"; from = [ "$C4/32", "$C6/128" ]; },
	{ dst = "$S4"; port = 24; mode = "native"; key = "k"; from = [ "$C4/32", "$C6/128" ]; },
	{ dst = "$S6"; port = 24; mode = "native"; key = "k"; from = [ "$C4/32", "$C6/128" ]; }
);
EOC
	chmod 600 "$1"
}

for kind in kernel user; do
	router_conf "$TMP/r-$kind.conf" $kind
	start_knockgw "$NS_R" "$TMP/r-$kind.conf"
	R_PID=$KGW_PID
	for dst in $S4 $S6; do
		case $dst in *:*) fam=v6 ;; *) fam=v4 ;; esac
		for role in "$NS_R the router's own" "$NS_C the client host's, routed"; do
			ns=${role%% *} who=${role#* }
			for pair in "22 23 ECONNREFUSED port" "24 25 EHOSTUNREACH host"; do
				set -- $pair
				knocked0=$(counter client_knocked "$NS_R")
				plain=$(connect_errno "$ns" $dst $2)
				got=$(connect_errno "$ns" $dst $1)
				check "$kind $fam, $who: a plain connect to $2 ($4 unreachable) fails with $3" \
					[ "$plain" = "$3" ]
				check "$kind $fam, $who: a knocked connect to $1 ($4 unreachable) fails with $3 too (got $got)" \
					[ "$got" = "$3" ]
				check "$kind $fam, $who: ... and it was knocked" \
					[ "$(counter client_knocked "$NS_R")" -gt "$knocked0" ]
			done
		done
	done
	check "$kind: the router translated the errors back" \
		[ "$(counter client_icmp_translated "$NS_R")" -ge 8 ]
	stop_knockgw "$R_PID"
done
finish
