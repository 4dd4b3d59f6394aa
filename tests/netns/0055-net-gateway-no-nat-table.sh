#!/bin/sh
# The gateway client role on a router with no nat table of its own.  The
# knocked flows of LAN hosts leave with the router's address because the
# conntrack entry knockgw makes carries their source NAT; the kernel applies
# such a binding only while some nat chain is registered in the namespace,
# so knockgw's table brings an empty one.  Here knockgw's is the router's
# only table: v4 and v6, kernel path and translate = "user", ssh from the
# LAN host logs in and moves 1 MB each way, the server sees only the
# router's address (never a packet from the LAN's to port 22); the router's own ssh is knocked; and the empty nat
# chain maps nothing else: a LAN connection to another port still leaves
# with its LAN source (which the server cannot answer: it has no route to
# the LAN, as the Internet has none).
#
#   LAN $NS_L                router $NS_R                          server $NS_S
#   l0 10.0.0.2/24      ---  r0 10.0.0.1/24   r1 203.0.113.1/24  ---  s1 203.0.113.2/24
#      fd00::2/64               fd00::1/64       2001:db8:5::1/64        2001:db8:5::2/64
#   ssh, socat               knockgw (from = 10.0.0.2, fd00::2),      sshd :22, knockgw
#                            no other nft table                      (protect 22); counts
#                                                                    LAN-sourced packets
. "$(dirname "$0")/lib/lib.sh"

NS_L=$PFX-1
NS_R=$PFX-3
L4=10.0.0.2 L6=fd00::2
R4=203.0.113.1 R6=2001:db8:5::1
S4=203.0.113.2 S6=2001:db8:5::2
in_l() { ip netns exec "$NS_L" "$@"; }
in_r() { ip netns exec "$NS_R" "$@"; }

for ns in "$NS_L" "$NS_R" "$NS_S"; do
	ip netns add "$ns"
	ip -n "$ns" link set lo up
done
ip link add l0 netns "$NS_L" type veth peer name r0 netns "$NS_R"
ip link add r1 netns "$NS_R" type veth peer name s1 netns "$NS_S"
in_l ip addr add $L4/24 dev l0
in_l ip addr add $L6/64 dev l0 nodad
in_r ip addr add 10.0.0.1/24 dev r0
in_r ip addr add fd00::1/64 dev r0 nodad
in_r ip addr add $R4/24 dev r1
in_r ip addr add $R6/64 dev r1 nodad
in_s ip addr add $S4/24 dev s1
in_s ip addr add $S6/64 dev s1 nodad
for dev in "$NS_L l0" "$NS_R r0" "$NS_R r1" "$NS_S s1"; do
	set -- $dev
	ip netns exec "$1" ethtool -K "$2" rx off tx off >/dev/null
	ip -n "$1" link set "$2" up
done
in_l ip route add default via 10.0.0.1
in_l ip -6 route add default via fd00::1
in_r sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
wait_for 5 in_r ping -c1 -W1 $S4
wait_for 5 in_r ping -6 -c1 -W1 $S6
in_s nft -f - <<EOF
table inet seen {
	chain input {
		type filter hook input priority filter; policy accept;
		ip saddr $L4 tcp dport 8080 tcp flags syn counter
		ip6 saddr $L6 tcp dport 8080 tcp flags syn counter
		ip saddr $L4 tcp dport 22 counter
		ip6 saddr $L6 tcp dport 22 counter
	}
}
EOF

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

# seen FAMILY PORT: packets to PORT (SYNs to 8080) the server got from the
# LAN address of FAMILY (ip, ip6).
seen() {
	in_s nft list chain inet seen input | awk -v f="$1" -v p="$2" '$1 == f && $6 == p {
		for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}

SSH="ssh $SSH_OPTS -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3"
head -c 1000000 /dev/urandom >"$TMP/src.bin"
want=$(sha256sum <"$TMP/src.bin" | cut -d' ' -f1)

for kind in kernel user; do
	gw_conf "$TMP/gw-$kind.conf" $kind
	start_knockgw "$NS_R" "$TMP/gw-$kind.conf"
	GW_PID=$KGW_PID
	check "$kind: knockgw's table is the router's only one" \
		[ "$(in_r nft list tables)" = "table inet knockgw" ]
	for dst in $S4 $S6; do
		case $dst in
		*:*) fam=v6 ip=ip6 bdst="[$dst]" ;;
		*) fam=v4 ip=ip bdst=$dst ;;
		esac
		out=$(in_l timeout 30 $SSH root@$dst echo knocked 2>"$TMP/ssh.err") || true
		check "$kind $fam: ssh from the LAN host logs in" [ "$out" = knocked ]
		[ "$out" = knocked ] || cat "$TMP/ssh.err" >&2
		got=$(in_l timeout 60 $SSH root@$dst sha256sum <"$TMP/src.bin" 2>/dev/null |
			cut -d' ' -f1) || true
		check "$kind $fam: 1 MB up arrive byte-exact" [ "$got" = "$want" ]
		got=$(in_l timeout 60 $SSH root@$dst "cat '$TMP/src.bin'" 2>/dev/null |
			sha256sum | cut -d' ' -f1) || true
		check "$kind $fam: 1 MB down arrive byte-exact" [ "$got" = "$want" ]
		out=$(in_r timeout 30 $SSH root@$dst echo own 2>/dev/null) || true
		check "$kind $fam: the router's own ssh is knocked" [ "$out" = own ]
		before=$(seen $ip 8080)
		in_l timeout 10 socat -T 1 - TCP:$bdst:8080,connect-timeout=1 </dev/null \
			>/dev/null 2>&1 || true
		check "$kind $fam: another LAN connection leaves un-NAT'ed (the server saw its LAN source)" \
			[ "$(seen $ip 8080)" -gt "$before" ]
	done
	stop_knockgw "$GW_PID"
done
check "sshd saw the router's addresses" \
	sh -c "grep -q 'Connection from $R4 ' '$TMP/sshd.log' && grep -q 'Connection from $R6 ' '$TMP/sshd.log'"
check "sshd never saw a LAN address" sh -c "! grep -Eq 'Connection from (10\\.0\\.0\\.|fd00:)' '$TMP/sshd.log'"
check "the server never got a packet to port 22 from a LAN address" \
	[ "$(seen ip 22)/$(seen ip6 22)" = 0/0 ]
KGW_PID=$SRV_PID
check "the server's daemon stayed up" kill -0 "$SRV_PID"
finish
