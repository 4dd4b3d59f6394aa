#!/bin/sh
# Attack on the gateway client role: forged `from` sources.  A host on the
# router's WAN side sends SYNs whose source is a LAN address in `from`
# (the router's rp_filter is loose, 2, so its kernel routes them): the
# router must not knock for them, but drop them (the reverse-path rule,
# counted by nft), v4 and v6, and the real LAN host still gets in.  A LAN
# host flooding knocks from a made-up LAN source (that does arrive the way
# its source is routed, so it is knocked) against a server with
# limits.replay = 64 cannot lock the real LAN host out either.  With
# from_interfaces (asymmetric routes) a `from` source routed elsewhere is
# knocked when it arrives on a listed interface, and a forged one from the
# WAN is still dropped.  print-rules and the installed rules agree.
#
#   LAN $NS_L             router $NS_R                        server $NS_S
#   l0 10.0.0.2/24  ---  r0 10.0.0.1/24   r1 203.0.113.1/24 ---  s1 203.0.113.2/24
#      fd00::2/64           fd00::1/64       2001:db8:5::1/64       2001:db8:5::2/64
#   ssh, synburst.py     knockgw (from 10.0.0.0/24,          sshd :22, knockgw
#                        10.9.0.0/24, fd00::/64, fd09::/64)  (limits.replay 64)
#                        masquerade out of r1, rp_filter 2
#                         r2 198.51.100.1/24, 2001:db8:a::1/64
#                            |   routes 10.9.0.0/24, fd09::/64 via the WAN host
#                         WAN host $NS_A  a0 198.51.100.2/24, 2001:db8:a::2/64
#                         synburst.py with forged sources
. "$(dirname "$0")/lib/lib.sh"

NS_L=$PFX-1
NS_A=$PFX-4
L4=10.0.0.2 L6=fd00::2
S4=203.0.113.2 S6=2001:db8:5::2
in_l() { ip netns exec "$NS_L" "$@"; }
in_a() { ip netns exec "$NS_A" "$@"; }

make_spoof_topology() {
	for ns in "$NS_L" "$NS_R" "$NS_S" "$NS_A"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip link add l0 netns "$NS_L" type veth peer name r0 netns "$NS_R"
	ip link add r1 netns "$NS_R" type veth peer name s1 netns "$NS_S"
	ip link add r2 netns "$NS_R" type veth peer name a0 netns "$NS_A"
	in_l ip addr add $L4/24 dev l0
	in_l ip addr add $L6/64 dev l0 nodad
	in_r ip addr add 10.0.0.1/24 dev r0
	in_r ip addr add fd00::1/64 dev r0 nodad
	in_r ip addr add 203.0.113.1/24 dev r1
	in_r ip addr add 2001:db8:5::1/64 dev r1 nodad
	in_r ip addr add 198.51.100.1/24 dev r2
	in_r ip addr add 2001:db8:a::1/64 dev r2 nodad
	in_s ip addr add $S4/24 dev s1
	in_s ip addr add $S6/64 dev s1 nodad
	in_a ip addr add 198.51.100.2/24 dev a0
	in_a ip addr add 2001:db8:a::2/64 dev a0 nodad
	for dev in "$NS_L l0" "$NS_R r0" "$NS_R r1" "$NS_R r2" "$NS_S s1" "$NS_A a0"; do
		set -- $dev
		ip netns exec "$1" ethtool -K "$2" rx off tx off >/dev/null
		ip -n "$1" link set "$2" up
	done
	in_l ip route add default via 10.0.0.1
	in_l ip -6 route add default via fd00::1
	in_a ip route add default via 198.51.100.1
	in_a ip -6 route add default via 2001:db8:a::1
	in_s ip route add default via 203.0.113.1
	in_s ip -6 route add default via 2001:db8:5::1
	# A second `from` network the router reaches through the WAN host.
	in_r ip route add 10.9.0.0/24 via 198.51.100.2
	in_r ip -6 route add fd09::/64 via 2001:db8:a::2
	# Loose reverse-path filtering, as on the measured router: the kernel
	# takes a packet whose source it can route at all, whatever the interface.
	in_r sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.default.rp_filter=2
	for dev in r0 r1 r2; do in_r sysctl -qw "net.ipv4.conf.$dev.rp_filter=2"; done
	in_r nft -f - <<-EON
	table inet gwnat {
		chain post {
			type nat hook postrouting priority srcnat; policy accept;
			oifname "r1" masquerade
		}
	}
	EON
	wait_for 5 in_l ping -c1 -W1 $S4
	wait_for 5 in_l ping -6 -c1 -W1 $S6
	wait_for 5 in_a ping -c1 -W1 198.51.100.1
	wait_for 5 in_a ping -6 -c1 -W1 2001:db8:a::1
}

make_spoof_topology
start_sshd
K=$(key_file k)
start_server "$(entry 22)" "limits = { replay = 64; };"
SRV_PID=$KGW_PID

# gw_conf FILE [IFACES]: the router's configuration (from_interfaces IFACES).
gw_conf() {
	gc_if=${2:+ from_interfaces = [ $2 ];}
	gc_from='from = [ "10.0.0.0/24", "10.9.0.0/24", "fd00::/64", "fd09::/64" ];'
	cat >"$1" <<EOC
control_socket = "$TMP/gw.sock";
keys = ( { name = "k"; file = "$K"; } );
knock = (
	{ dst = "$S4"; port = 22; mode = "native"; key = "k"; $gc_from$gc_if },
	{ dst = "$S6"; port = 22; mode = "native"; key = "k"; $gc_from$gc_if }
);
EOC
	chmod 600 "$1"
}

# burst NS SRC DST COUNT BASE: COUNT SYNs from SRC (forged) to DST:22 out of
# NS's default route, TSVAL and source port BASE + i; no answer is awaited.
burst() {
	: >"$TMP/burst.txt"
	for i in $(seq 1 "$4"); do echo "$(($5 + i)) 01020304" >>"$TMP/burst.txt"; done
	case $1 in "$NS_A") b_if=a0 ;; *) b_if=l0 ;; esac
	ip netns exec "$1" python3 "$TOP/tests/netns/lib/synburst.py" --iface $b_if --src "$2" \
		--dst "$3" --dport 22 --list "$TMP/burst.txt" --sport-base "$5" --timeout 0.2 \
		>/dev/null
}

# rx DEV: packets the router received on DEV; rx_at_least DEV N.
rx() { in_r cat "/sys/class/net/$1/statistics/rx_packets"; }
rx_at_least() { [ "$(rx "$1")" -ge "$2" ]; }
# knocked_at_least N: the router's daemon knocked N SYNs in all.
knocked_at_least() { [ "$(counter client_knocked "$NS_R")" -ge "$1" ]; }
# decided [NS]: every packet the daemon's queues took got its verdict.
decided() { [ "$(qcounter queued "${1:-$NS_R}")" = "$(qcounter verdicts "${1:-$NS_R}")" ]; }
# spoof_drops: packets the router's reverse-path rules dropped (nft counters).
spoof_drops() {
	in_r nft list chain inet knockgw prerouting_raw 2>/dev/null | awk '
		/ drop$/ { for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1) }
		END { print s + 0 }'
}
drops_at_least() { [ "$(spoof_drops)" -ge "$1" ]; }
SSH="ssh $SSH_OPTS -o ConnectTimeout=10"
# lan_ssh DST: the LAN host's own ssh, through the router's knock.
lan_ssh() { [ "$(in_l timeout 30 $SSH "root@$1" echo in 2>>"$TMP/ssh.err")" = in ]; }

gw_conf "$TMP/gw.conf"
start_knockgw "$NS_R" "$TMP/gw.conf"
GW_PID=$KGW_PID
check "the LAN host gets in (v4) before any attack" lan_ssh $S4

base=20000
for fam in 4 6; do
	if [ $fam = 4 ]; then dst=$S4 lan=$L4 made=10.0.0.77; else dst=$S6 lan=$L6 made=fd00::77; fi
	# 1. From the WAN, 100 SYNs claiming to be the LAN host.
	k0=$(counter client_knocked "$NS_R")
	a0=$(counter syn_accepted)
	r0=$(counter syn_refused)
	d0=$(spoof_drops)
	rx0=$(rx r2)
	burst "$NS_A" $lan $dst 100 $base
	base=$((base + 200))
	wait_for 10 rx_at_least r2 $((rx0 + 100)) || true
	wait_for 5 decided || true
	check "v$fam: 100 forged SYNs from the WAN reached the router" [ "$(rx r2)" -ge $((rx0 + 100)) ]
	check "v$fam: the router knocked for none of them" \
		[ "$(counter client_knocked "$NS_R")" = "$k0" ]
	check "v$fam: its reverse-path rule dropped them (nft counter)" \
		[ "$(spoof_drops)" -ge $((d0 + 100)) ]
	check "v$fam: nothing reached the server (no knock accepted, none refused)" \
		[ "$(counter syn_accepted)/$(counter syn_refused)" = "$a0/$r0" ]
	check "v$fam: the LAN host still gets in" lan_ssh $dst

	# 2. From the LAN, 100 knocks for a made-up LAN address: they come the
	# way their source is routed, so the router knocks; the server's
	# replay table (64) fills, and must not lock the real host out.
	k0=$(counter client_knocked "$NS_R")
	a0=$(counter syn_accepted)
	burst "$NS_L" $made $dst 100 $base
	base=$((base + 200))
	wait_for 10 knocked_at_least $((k0 + 100)) || true
	wait_for 10 decided "$NS_S" || true
	check "v$fam: the router knocked for 100 SYNs from a LAN source" \
		[ "$(counter client_knocked "$NS_R")" -ge $((k0 + 100)) ]
	check "v$fam: the server let through all 100 (a full table refuses nothing)" \
		[ "$(counter syn_accepted)" -ge $((a0 + 100)) ]
	check "v$fam: the real LAN host still gets in after the flood" lan_ssh $dst
done
check "the flood displaced the busiest source's oldest knocks (counted)" \
	[ "$(counter replay_displaced_source)" -gt 0 ]
check "... and nothing was refused for a full table" \
	grep -q "replay table full (limits.replay 64): forgot" "$TMP/knockgw-$NS_S.log"

# 3. print-rules and the installed table are one plan (as in 0008).
toq() { sed 's/queue num \([0-9-]*\)\( bypass\)\{0,1\}$/comment "queue num \1\2"/'; }
same_rules() {
	in_r "$KNOCKGW" print-rules -c "$1" >"$TMP/print.txt"
	if grep -q "lacks nft's queue expression" "$TMP/print.txt"; then q='toq'; else q='cat'; fi
	ip netns add "$PFX-5"
	$q <"$TMP/print.txt" >"$TMP/print.nft"
	ip netns exec "$PFX-5" nft -f "$TMP/print.nft" || return 1
	ip netns exec "$PFX-5" nft list table inet knockgw 2>/dev/null | strip >"$TMP/p.nft"
	ip netns del "$PFX-5"
	in_r nft list table inet knockgw 2>/dev/null | strip | $q >"$TMP/t.nft"
	diff -u "$TMP/p.nft" "$TMP/t.nft" && grep -q "$2" "$TMP/t.nft"
}
check "print-rules' reverse-path rules, loaded by nft, list as the daemon's" \
	same_rules "$TMP/gw.conf" "fib saddr . iif oif missing"

# 4. A `from` source routed through the WAN host (10.9.0.0/24) but sent by
# the LAN host: the reverse-path rule drops it...
for fam in 4 6; do
	if [ $fam = 4 ]; then dst=$S4 asym=10.9.0.5; else dst=$S6 asym=fd09::5; fi
	k0=$(counter client_knocked "$NS_R")
	d0=$(spoof_drops)
	burst "$NS_L" $asym $dst 1 $base
	base=$((base + 10))
	wait_for 5 drops_at_least $((d0 + 1)) || true
	wait_for 5 decided || true
	check "v$fam: a from source routed elsewhere, arriving from the LAN: dropped" \
		[ "$(spoof_drops)" -gt "$d0" ]
	check "v$fam: ... not knocked" [ "$(counter client_knocked "$NS_R")" = "$k0" ]
done
stop_knockgw "$GW_PID"

# ... unless from_interfaces names the LAN interface (asymmetric routes).
gw_conf "$TMP/gw-if.conf" '"r0"'
start_knockgw "$NS_R" "$TMP/gw-if.conf"
GW_PID=$KGW_PID
check "from_interfaces: print-rules and the installed rules agree" \
	same_rules "$TMP/gw-if.conf" 'iifname "r0"'
for fam in 4 6; do
	if [ $fam = 4 ]; then dst=$S4 asym=10.9.0.5 lan=$L4; else dst=$S6 asym=fd09::5 lan=$L6; fi
	k0=$(counter client_knocked "$NS_R")
	burst "$NS_L" $asym $dst 1 $base
	base=$((base + 10))
	wait_for 5 knocked_at_least $((k0 + 1)) || true
	check "from_interfaces v$fam: the routed-elsewhere source from the LAN is knocked" \
		[ "$(counter client_knocked "$NS_R")" = $((k0 + 1)) ]
	k0=$(counter client_knocked "$NS_R")
	d0=$(spoof_drops)
	burst "$NS_A" $lan $dst 20 $base
	base=$((base + 30))
	wait_for 5 drops_at_least $((d0 + 20)) || true
	wait_for 5 decided || true
	check "from_interfaces v$fam: forged LAN sources from the WAN are still dropped" \
		[ "$(spoof_drops)" -ge $((d0 + 20)) ]
	check "from_interfaces v$fam: ... not knocked" [ "$(counter client_knocked "$NS_R")" = "$k0" ]
	check "from_interfaces v$fam: the LAN host gets in" lan_ssh $dst
done
stop_knockgw "$GW_PID"
KGW_PID=$SRV_PID
check "the server's daemon stayed up" kill -0 "$SRV_PID"
finish
