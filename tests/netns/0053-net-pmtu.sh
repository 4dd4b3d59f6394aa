#!/bin/sh
# Path MTU discovery through a knocked flow.  A 1280-byte hop in the middle
# of the path and no MSS clamping anywhere (a tunnel, a VPN): the hosts
# learn the path MTU only from the middle routers' ICMP "fragmentation
# needed" / ICMPv6 "packet too big", which quote the segment as it left,
# with the knock-shifted sequence number.  knockgw must shift the quote
# back, or the client's TCP drops the error as out of window and the flow
# stalls at its first full-sized segment (ssh's key exchange).  Both client
# roles (the gateway's own ssh, and a LAN host's routed through it), v4 and
# v6, kernel path and translate = "user": ssh login, 4 MB up and 4 MB down
# byte-exact, the middle hop did send the errors, the gateway's daemon
# translated them, and no client TCP counted an out-of-window ICMP.
#
#   LAN $NS_L        gateway $NS_G                 $NS_M                    $NS_N                  server $NS_S
#   l0 10.0.0.2 ---- g0 10.0.0.1   g1 198.51.100.1 ---- m0 198.51.100.2  m1 192.0.2.1 ==== n0 192.0.2.2  n1 203.0.113.1 ---- s0 203.0.113.2
#      fd00::2          fd00::1       2001:db8:1::1        2001:db8:1::2    2001:db8:2::1    2001:db8:2::2 2001:db8:5::1     2001:db8:5::2
#   ssh              knockgw (knock 22,             router                  router                 sshd :22,
#                    from the LAN host),                 ==== MTU 1280 (both ends), no clamping     knockgw (protect 22)
#                    masquerade out of g1
. "$(dirname "$0")/lib/lib.sh"

NS_L=$PFX-1 NS_G=$PFX-3 NS_M=$PFX-4 NS_N=$PFX-5
L4=10.0.0.2 L6=fd00::2
S4=203.0.113.2 S6=2001:db8:5::2
in_l() { ip netns exec "$NS_L" "$@"; }
in_g() { ip netns exec "$NS_G" "$@"; }
in_m() { ip netns exec "$NS_M" "$@"; }

# link NS1 DEV1 NS2 DEV2: a veth pair, checksums finished and checked on
# both ends (see make_topology), up.
link() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"
	for end in "$1 $2" "$3 $4"; do
		set -- $end
		ip netns exec "$1" ethtool -K "$2" rx off tx off >/dev/null
		ip -n "$1" link set "$2" up
	done
}

make_pmtu_topology() {
	for ns in "$NS_L" "$NS_G" "$NS_M" "$NS_N" "$NS_S"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	link "$NS_L" l0 "$NS_G" g0
	link "$NS_G" g1 "$NS_M" m0
	link "$NS_M" m1 "$NS_N" n0
	link "$NS_N" n1 "$NS_S" s0
	# The tunnel-like hop: neither end host's interface is small, so
	# their MSS is a full 1460 / 1440 and only PMTU discovery helps.
	ip -n "$NS_M" link set m1 mtu 1280
	ip -n "$NS_N" link set n0 mtu 1280
	ip -n "$NS_L" addr add $L4/24 dev l0
	ip -n "$NS_L" addr add $L6/64 dev l0 nodad
	ip -n "$NS_G" addr add 10.0.0.1/24 dev g0
	ip -n "$NS_G" addr add fd00::1/64 dev g0 nodad
	ip -n "$NS_G" addr add 198.51.100.1/24 dev g1
	ip -n "$NS_G" addr add 2001:db8:1::1/64 dev g1 nodad
	ip -n "$NS_M" addr add 198.51.100.2/24 dev m0
	ip -n "$NS_M" addr add 2001:db8:1::2/64 dev m0 nodad
	ip -n "$NS_M" addr add 192.0.2.1/24 dev m1
	ip -n "$NS_M" addr add 2001:db8:2::1/64 dev m1 nodad
	ip -n "$NS_N" addr add 192.0.2.2/24 dev n0
	ip -n "$NS_N" addr add 2001:db8:2::2/64 dev n0 nodad
	ip -n "$NS_N" addr add 203.0.113.1/24 dev n1
	ip -n "$NS_N" addr add 2001:db8:5::1/64 dev n1 nodad
	ip -n "$NS_S" addr add $S4/24 dev s0
	ip -n "$NS_S" addr add $S6/64 dev s0 nodad
	ip -n "$NS_L" route add default via 10.0.0.1
	ip -n "$NS_L" -6 route add default via fd00::1
	ip -n "$NS_G" route add default via 198.51.100.2
	ip -n "$NS_G" -6 route add default via 2001:db8:1::2
	ip -n "$NS_M" route add 203.0.113.0/24 via 192.0.2.2
	ip -n "$NS_M" -6 route add 2001:db8:5::/64 via 2001:db8:2::2
	ip -n "$NS_N" route add default via 192.0.2.1
	ip -n "$NS_N" -6 route add default via 2001:db8:2::1
	ip -n "$NS_S" route add default via 203.0.113.1
	ip -n "$NS_S" -6 route add default via 2001:db8:5::1
	for ns in "$NS_G" "$NS_M" "$NS_N"; do
		ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	done
	in_g nft -f - <<-EON
	table inet gwnat {
		chain post {
			type nat hook postrouting priority srcnat; policy accept;
			oifname "g1" masquerade
		}
	}
	EON
	wait_for 5 in_l ping -c1 -W1 $S4
	wait_for 5 in_l ping -6 -c1 -W1 $S6
}

# stat NS NAME: a kernel counter of NS (nstat, absolute, history kept
# per namespace and never written).
kstat() {
	NSTAT_HISTORY=$TMP/nstat-$1 ip netns exec "$1" nstat -asz "$2" | awk -v n="$2" '$1 == n { print $2 }'
}

# forget_pmtu: the path MTUs the end hosts learnt are forgotten, so the
# next flow needs the middle hops' errors again (the server's too: it
# announces an MSS within the path MTU it learnt towards the gateway's
# address, which every flow here comes from).
forget_pmtu() {
	for fp_ns in "$NS_L" "$NS_G" "$NS_S"; do
		ip netns exec "$fp_ns" ip route flush cache
		ip netns exec "$fp_ns" ip -6 route flush cache
	done
}

make_pmtu_topology
start_sshd
K=$(key_file k)
start_server "$(entry 22)"
SRV_PID=$KGW_PID

gw_conf() {
	cat >"$1" <<EOC
translate = "$2";
control_socket = "$TMP/gw-$2.sock";
keys = ( { name = "k"; file = "$K"; } );
knock = (
	{ dst = "$S4"; port = 22; mode = "native"; key = "k"; from = [ "$L4/32", "$L6/128" ]; },
	{ dst = "$S6"; port = 22; mode = "native"; key = "k"; from = [ "$L4/32", "$L6/128" ]; }
);
EOC
	chmod 600 "$1"
}

SSH="ssh $SSH_OPTS -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3"
head -c 4000000 /dev/urandom >"$TMP/src.bin"
want=$(sha256sum <"$TMP/src.bin" | cut -d' ' -f1)

# transfer TAG NS DST: with no path MTU known, from NS, an ssh login with
# 4 MB up (the server hashes what it got), then 4 MB down, each checked; the middle
# hop sent errors for this flow's family and the gateway's daemon
# translated some.
transfer() {
	tr_tag=$1 tr_ns=$2 tr_dst=$3
	case $tr_dst in
	*:*) tr_icmp=Icmp6OutPktTooBigs ;;
	*) tr_icmp=IcmpOutDestUnreachs ;;
	esac
	forget_pmtu
	tr_sent=$(kstat "$NS_M" $tr_icmp)
	tr_done=$(counter client_icmp_translated "$NS_G")
	tr_oow=$(kstat "$tr_ns" TcpExtOutOfWindowIcmps)
	# The login and the upload in one session: "in", then the server's hash.
	out=$(ip netns exec "$tr_ns" timeout 60 $SSH root@$tr_dst "echo in; sha256sum" \
		<"$TMP/src.bin" 2>"$TMP/ssh.err") || true
	check "$tr_tag: ssh logs in" [ "$(echo "$out" | head -n 1)" = in ]
	if [ "$(echo "$out" | head -n 1)" != in ]; then
		cat "$TMP/ssh.err" >&2
		not_ok "$tr_tag: 4 MB up (not tried: no login)"
		not_ok "$tr_tag: 4 MB down (not tried: no login)"
	else
		check "$tr_tag: 4 MB up arrive byte-exact" \
			[ "$(echo "$out" | sed -n 2p | cut -d' ' -f1)" = "$want" ]
		got=$(ip netns exec "$tr_ns" timeout 60 $SSH root@$tr_dst "cat '$TMP/src.bin'" \
			2>/dev/null | sha256sum | cut -d' ' -f1) || true
		check "$tr_tag: 4 MB down arrive byte-exact" [ "$got" = "$want" ]
	fi
	tr_sent=$(($(kstat "$NS_M" $tr_icmp) - tr_sent))
	tr_oow=$(($(kstat "$tr_ns" TcpExtOutOfWindowIcmps) - tr_oow))
	check "$tr_tag: the 1280-byte hop sent $tr_icmp ($tr_sent)" [ "$tr_sent" -gt 0 ]
	check "$tr_tag: the gateway's knockgw translated errors back" \
		[ "$(counter client_icmp_translated "$NS_G")" -gt "$tr_done" ]
	# One that comes after the data it is about was acknowledged is out of
	# window for any flow; without translation, every one is.
	check "$tr_tag: the client's TCP took the errors ($tr_oow out of window)" \
		[ "$tr_oow" -lt "$tr_sent" ]
}

for kind in kernel user; do
	gw_conf "$TMP/gw-$kind.conf" $kind
	start_knockgw "$NS_G" "$TMP/gw-$kind.conf"
	GW_PID=$KGW_PID
	for dst in $S4 $S6; do
		case $dst in *:*) fam=v6 ;; *) fam=v4 ;; esac
		transfer "$kind $fam, LAN host through the gateway" "$NS_L" $dst
		transfer "$kind $fam, the gateway's own ssh" "$NS_G" $dst
	done
	stop_knockgw "$GW_PID"
done
check "sshd never saw a LAN address (the routed flows were masqueraded)" \
	sh -c "! grep -Eq 'Connection from (10\\.0\\.0\\.|fd00:)' '$TMP/sshd.log'"
KGW_PID=$SRV_PID
check "the server's daemon stayed up" kill -0 "$SRV_PID"
finish
