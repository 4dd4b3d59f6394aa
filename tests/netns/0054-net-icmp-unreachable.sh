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
. "$(dirname "$0")/lib/lib.sh"

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

# connect_errnos NS DST PORT...: the errno name each blocking connect()
# from NS to DST:PORT ends with (OK if it connects), one per port, in
# order; bounded by the SYN retries and a timeout.
connect_errnos() {
	ce_ns=$1
	shift
	ip netns exec "$ce_ns" timeout 90 python3 -c '
import errno, socket, sys
dst = sys.argv[1]
for port in sys.argv[2:]:
    s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET)
    try:
        s.connect((dst, int(port)))
        print("OK")
    except OSError as e:
        print(errno.errorcode.get(e.errno, e.errno))
    s.close()
' "$@" 2>&1 | tr '\n' ' ' || echo "timeout"
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
			# Plain 23 and knocked 22: port unreachable; plain 25 and knocked
			# 24: host unreachable.  One errno name a word.
			# shellcheck disable=SC2046
			set -- $(connect_errnos "$ns" $dst 23 22 25 24)
			check "$kind $fam, $who: a plain connect to 23 (port unreachable) fails with ECONNREFUSED" \
				[ "${1:-}" = ECONNREFUSED ]
			check "$kind $fam, $who: a knocked connect to 22 (port unreachable) fails with ECONNREFUSED too (got ${2:-})" \
				[ "${2:-}" = ECONNREFUSED ]
			check "$kind $fam, $who: a plain connect to 25 (host unreachable) fails with EHOSTUNREACH" \
				[ "${3:-}" = EHOSTUNREACH ]
			check "$kind $fam, $who: a knocked connect to 24 (host unreachable) fails with EHOSTUNREACH too (got ${4:-})" \
				[ "${4:-}" = EHOSTUNREACH ]
		done
	done
	# 2 families x 2 roles x 2 knocked ports, each SYN knocked.
	check "$kind: the router knocked every knocked connect" \
		[ "$(counter client_knocked "$NS_R")" -ge 8 ]
	check "$kind: ... and translated the errors back" \
		[ "$(counter client_icmp_translated "$NS_R")" -ge 8 ]
	stop_knockgw "$R_PID"
done
finish
