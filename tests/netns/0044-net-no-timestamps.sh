#!/bin/sh
# Clients without TCP timestamps (as Windows by default): two LAN hosts
# whose net.ipv4.tcp_timestamps, tcp_sack and tcp_window_scaling are 0 reach
# a protected sshd at once, v4 and v6, through the gateway client role (the
# router knocks for them; their own addresses, so the server sees two
# sources), through the gateway behind its NAT (one source), and through the
# client role (each host's own knockgw).  Each host logs in and copies 20 MB
# up by scp over one ssh connection (a control master: one knock), and the
# copies arrive byte-exact.  Without timestamps a native knock used to be a
# function of destination, port and time alone: the second host sent the
# first one's ISN and was refused as a replay.  Now each connection's knock
# is the nonce form (isn.h): the server counts it (syn_nonce).  A nonce
# is 8 bits: two hosts at different addresses pick the same one with odds
# of 1 in 256 per pair of connections in one epoch, and the second is then
# refused as a replay, by design; a host refused so gets one more try (a
# new connection, a new nonce) when, and only when, the server counted a
# replay for it.  The old code's second host is refused on every try.
#
#   host A $NS_A  a0 198.51.100.2/24 10.0.0.2/24 2001:db8:1::2/64 fd00::2/64 --+
#   host B $NS_B  b0 198.51.100.3/24 10.0.0.3/24 2001:db8:1::3/64 fd00::3/64 --+
#                                                                              |
#   router $NS_R  br0 (ra, rb) 198.51.100.1/24 10.0.0.1/24 2001:db8:1::1/64 fd00::1/64
#                 r1 203.0.113.1/24 2001:db8:5::1/64, forwarding, masquerade of
#                 10/8 and fd00::/8 out of r1; knockgw (from both LANs) in the
#                 gateway phases
#                   |
#   server $NS_S  s1 203.0.113.2/24 2001:db8:5::2/64, sshd :22, knockgw
. "$(dirname "$0")/lib/lib.sh"

NS_A=$PFX-1
NS_B=$PFX-3
S4=203.0.113.2 S6=2001:db8:5::2
in_a() { ip netns exec "$NS_A" "$@"; }
in_b() { ip netns exec "$NS_B" "$@"; }

make_tsless_topology() {
	for ns in "$NS_A" "$NS_B" "$NS_R" "$NS_S"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip link add a0 netns "$NS_A" type veth peer name ra netns "$NS_R"
	ip link add b0 netns "$NS_B" type veth peer name rb netns "$NS_R"
	ip link add r1 netns "$NS_R" type veth peer name s1 netns "$NS_S"
	in_r ip link add br0 type bridge
	in_r ip link set ra master br0
	in_r ip link set rb master br0
	for h in "$NS_A a0 2" "$NS_B b0 3"; do
		set -- $h
		ip -n "$1" addr add "198.51.100.$3/24" dev "$2"
		ip -n "$1" addr add "10.0.0.$3/24" dev "$2"
		ip -n "$1" addr add "2001:db8:1::$3/64" dev "$2" nodad
		ip -n "$1" addr add "fd00::$3/64" dev "$2" nodad
		# Windows' defaults: no timestamps, no SACK, no window scaling.
		ip netns exec "$1" sysctl -qw net.ipv4.tcp_timestamps=0 net.ipv4.tcp_sack=0 \
			net.ipv4.tcp_window_scaling=0
	done
	in_r ip addr add 198.51.100.1/24 dev br0
	in_r ip addr add 10.0.0.1/24 dev br0
	in_r ip addr add 2001:db8:1::1/64 dev br0 nodad
	in_r ip addr add fd00::1/64 dev br0 nodad
	in_r ip addr add 203.0.113.1/24 dev r1
	in_r ip addr add 2001:db8:5::1/64 dev r1 nodad
	in_s ip addr add $S4/24 dev s1
	in_s ip addr add $S6/64 dev s1 nodad
	for dev in "$NS_A a0" "$NS_B b0" "$NS_R ra" "$NS_R rb" "$NS_R br0" "$NS_R r1" \
		"$NS_S s1"; do
		set -- $dev
		ip netns exec "$1" ethtool -K "$2" rx off tx off >/dev/null 2>&1 || true
		ip -n "$1" link set "$2" up
	done
	for ns in "$NS_A" "$NS_B"; do
		ip -n "$ns" route add default via 198.51.100.1
		ip -n "$ns" -6 route add default via 2001:db8:1::1
	done
	in_s ip route add default via 203.0.113.1
	in_s ip -6 route add default via 2001:db8:5::1
	in_r sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	in_r nft -f - <<-EON
	table inet lannat {
		chain post {
			type nat hook postrouting priority srcnat; policy accept;
			oifname "r1" ip saddr 10.0.0.0/8 masquerade
			oifname "r1" ip6 saddr fd00::/8 masquerade
		}
	}
	EON
	for ns in "$NS_A" "$NS_B"; do
		wait_for 5 ip netns exec "$ns" ping -c1 -W1 $S4
		wait_for 5 ip netns exec "$ns" ping -6 -c1 -W1 $S6
	done
}

make_tsless_topology
start_sshd
K=$(key_file k)
start_server "$(entry 22)"
SRV_PID=$KGW_PID

# knocks_conf FILE SOCKET [FROM]: native knocks for sshd at $S4 and $S6 (the
# gateway's with from = FROM).
knocks_conf() {
	kc_from=${3:+ from = [ $3 ];}
	cat >"$1" <<EOC
control_socket = "$2";
keys = ( { name = "k"; file = "$K"; } );
knock = (
	{ dst = "$S4"; port = 22; mode = "native"; key = "k";$kc_from },
	{ dst = "$S6"; port = 22; mode = "native"; key = "k";$kc_from }
);
EOC
	chmod 600 "$1"
}

head -c 20000000 /dev/urandom >"$TMP/src.bin"
want=$(sha256sum <"$TMP/src.bin" | cut -d' ' -f1)
SSH="ssh $SSH_OPTS -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3"

# master NS NAME DST [SRC]: an ssh control master from NS (bound to SRC) to
# DST, in the background once logged in; its socket $TMP/cm-NAME.
master() {
	ip netns exec "$1" timeout 30 $SSH -M -S "$TMP/cm-$2" -o ControlPersist=yes -f -N \
		${4:+-b "$4"} "root@$3" 2>>"$TMP/ssh-$2.err"
}
# close_master NS NAME DST
close_master() { ip netns exec "$1" $SSH -S "$TMP/cm-$2" -O exit "root@$3" 2>/dev/null || true; }

# both_in TAG DST SRC_A SRC_B: hosts A and B start their masters at once; a
# host refused while the server counted a replay tries once more.
both_in() {
	r0=$(counter replay_refused)
	master "$NS_A" a "$2" "$3" &
	pa=$!
	master "$NS_B" b "$2" "$4" &
	pb=$!
	if wait $pa; then ra=0; else ra=1; fi
	if wait $pb; then rb=0; else rb=1; fi
	if [ $((ra + rb)) -gt 0 ] && [ "$(counter replay_refused)" -gt "$r0" ]; then
		echo "# $1: a host was refused as a replay (nonce collision?): one more try"
		[ $ra = 0 ] || { master "$NS_A" a "$2" "$3" && ra=0; } || true
		[ $rb = 0 ] || { master "$NS_B" b "$2" "$4" && rb=0; } || true
	fi
	check "$1: host A logged in (control master)" [ $ra = 0 ]
	check "$1: host B logged in at the same time" [ $rb = 0 ]
	if [ $ra != 0 ] || [ $rb != 0 ]; then
		cat "$TMP/ssh-a.err" "$TMP/ssh-b.err" >&2
		return 0
	fi
	out=$(in_a $SSH -S "$TMP/cm-a" "root@$2" echo in-a 2>/dev/null) || true
	check "$1: host A runs a command" [ "$out" = in-a ]
	out=$(in_b $SSH -S "$TMP/cm-b" "root@$2" echo in-b 2>/dev/null) || true
	check "$1: host B runs a command" [ "$out" = in-b ]
	case $2 in *:*) bdst="[$2]" ;; *) bdst=$2 ;; esac
	rm -f "$TMP/dst-a.bin" "$TMP/dst-b.bin"
	in_a timeout 120 scp -q $SSH_OPTS -o ControlPath="$TMP/cm-a" "$TMP/src.bin" \
		"root@$bdst:$TMP/dst-a.bin" 2>>"$TMP/ssh-a.err" &
	pa=$!
	in_b timeout 120 scp -q $SSH_OPTS -o ControlPath="$TMP/cm-b" "$TMP/src.bin" \
		"root@$bdst:$TMP/dst-b.bin" 2>>"$TMP/ssh-b.err" &
	pb=$!
	wait $pa || true
	wait $pb || true
	for h in a b; do
		check "$1: host $h's 20 MB scp arrived byte-exact" \
			[ "$(sha256sum <"$TMP/dst-$h.bin" | cut -d' ' -f1)" = "$want" ]
	done
	close_master "$NS_A" a "$2"
	close_master "$NS_B" b "$2"
}

# The gateway client role: the router knocks for both LANs.
knocks_conf "$TMP/gw.conf" "$TMP/gw.sock" \
	'"198.51.100.0/24", "10.0.0.0/24", "2001:db8:1::/64", "fd00::/64"'
start_knockgw "$NS_R" "$TMP/gw.conf"
GW_PID=$KGW_PID
n0=$(counter syn_nonce)
both_in "gateway v4, two sources" $S4 198.51.100.2 198.51.100.3
both_in "gateway v6, two sources" $S6 2001:db8:1::2 2001:db8:1::3
check "gateway: the server took the knocks in the nonce form" \
	[ "$(counter syn_nonce)" -ge $((n0 + 4)) ]
both_in "gateway v4, behind its NAT" $S4 10.0.0.2 10.0.0.3
both_in "gateway v6, behind its NAT" $S6 fd00::2 fd00::3
check "gateway: the router knocked for its LAN" [ "$(counter client_knocked "$NS_R")" -ge 8 ]
stop_knockgw "$GW_PID"
# Its table stays after a stop (on_stop "hide"): routed SYNs would wait in
# a queue nobody reads.  The router goes back to routing only.
in_r "$KNOCKGW" flush -c "$TMP/gw.conf" >/dev/null

# The client role: each host's own knockgw; the router only routes.
knocks_conf "$TMP/a.conf" "$TMP/a.sock"
knocks_conf "$TMP/b.conf" "$TMP/b.sock"
start_knockgw "$NS_A" "$TMP/a.conf"
A_PID=$KGW_PID
start_knockgw "$NS_B" "$TMP/b.conf"
B_PID=$KGW_PID
n0=$(counter syn_nonce)
both_in "client role v4" $S4 198.51.100.2 198.51.100.3
both_in "client role v6" $S6 2001:db8:1::2 2001:db8:1::3
check "client role: the server took the knocks in the nonce form" \
	[ "$(counter syn_nonce)" -ge $((n0 + 4)) ]
check "client role: both hosts knocked" \
	[ "$(counter client_knocked "$NS_A")" -ge 2 ] && [ "$(counter client_knocked "$NS_B")" -ge 2 ]
stop_knockgw "$A_PID"
stop_knockgw "$B_PID"
check "sshd saw both hosts' own addresses" sh -c \
	"grep -q 'Connection from 198.51.100.2 ' '$TMP/sshd.log' && grep -q 'Connection from 198.51.100.3 ' '$TMP/sshd.log'"
KGW_PID=$SRV_PID
check "the server's daemon stayed up" kill -0 "$SRV_PID"
finish
