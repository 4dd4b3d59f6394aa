#!/bin/sh
# The dialled destination: a container's published port on this host (DNAT
# by another table, as Docker's) and a local port forward are protected by
# a protect entry for the port the client dials, and a knock verifies
# against what the client dialled, v4 and v6.  A refusal is this host's own
# closed-port answer, field by field, for every nmap scan type, also after
# the daemon stopped.  Loopback stays protected; traffic the host merely
# routes to the container is untouched.
#
#   client ns $NS_C            host ns $NS_S                  container ns $NS_K
#   +----------------+         +---------------------------+  +----------------+
#   | vc 192.0.2.1   |--veth---| vs 192.0.2.2, 2001:db8::2 |  | eth0 10.88.0.2 |
#   |    2001:db8::1 |         | table inet docker:        |  |  fd00:88::2    |
#   | prober, nmap,  |         |  dnat :2200 -> ct :22     |--| sshd :22       |
#   | ssh, client    |         |  redirect :2201 -> :22    |br0               |
#   | role (2200)    |         | sshd :22; knockgw protects|  +----------------+
#   +----------------+         |  22, 2200, 2201; 23 closed|
#                              +---------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
make_container br0
# The client can reach the container's own address too, routed (transit).
in_c ip route add 10.88.0.0/16 via $S4
in_c ip -6 route add fd00:88::/64 via $S6
# What Docker installs for a published port, in its own table; and a
# local forward 2201 -> 22 of this host.
in_s nft -f - <<EOF
table inet docker {
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr $S4 tcp dport 2200 dnat ip to $K4:22
		ip6 daddr $S6 tcp dport 2200 dnat ip6 to [$K6]:22
		tcp dport 2201 redirect to :22
	}
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		ip saddr 10.88.0.0/16 oifname "vs" masquerade
		ip6 saddr fd00:88::/64 oifname "vs" masquerade
	}
}
EOF
K=$(key_file k)

start_server "$(entry 22), $(entry 2200), $(entry 2201)"
SRV_PID=$KGW_PID

for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4 kdst=$K4; else src=$C6 dst=$S6 kdst=$K6; fi
	check "IPv$fam: a knock for the dialled $dst:2200 reaches the container's sshd" \
		knock_gets SA "$K" 2200 $src $dst
	check "IPv$fam: a knock for the container's own $kdst:22, sent to 2200: closed-port RST" \
		like_closed post$fam $src $dst 2200 "$(isn native "$K" "$kdst" 22 4242)" --tsval 4242
	check "IPv$fam: a plain SYN to 2200 gets this host's closed-port RST, field for field" \
		like_closed plain$fam $src $dst 2200 01020304 --tsval 99
	check "IPv$fam: a knock for the dialled $dst:2201 (local forward) gets in" \
		knock_gets SA "$K" 2201 $src $dst
	check "IPv$fam: a plain SYN to 2201 gets the closed-port RST" \
		like_closed plain1$fam $src $dst 2201 01020304 --tsval 98
	check "IPv$fam: routed to the container's own address, sshd answers (transit untouched)" \
		plain_gets SA 22 $src $kdst
	nmap_every "IPv$fam, the published port" $dst 2200
done

# Real clients: ssh through the client role's knock for the published port.
cat >"$TMP/client.conf" <<EOC
control_socket = "$TMP/client.sock";
keys = ( { name = "k"; file = "$K"; } );
knock = ( { dst = "$S4"; port = 2200; mode = "native"; key = "k"; },
	  { dst = "$S6"; port = 2200; mode = "native"; key = "k"; } );
EOC
chmod 600 "$TMP/client.conf"
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID
for dst in $S4 $S6; do
	out=$(in_c timeout 20 ssh $SSH_OPTS -p 2200 root@$dst ip netns identify 2>/dev/null) || true
	check "ssh -p 2200 $dst through the client role lands in the container" [ "$out" = "$NS_K" ]
done
stop_knockgw "$CLI_PID"
in_c "$KNOCKGW" flush -c "$TMP/client.conf" >/dev/null
out=$(in_c timeout 20 ssh $SSH_OPTS -o ConnectTimeout=5 -p 2200 root@$S4 true 2>&1) || true
check "plain ssh -p 2200 (no knock): Connection refused" \
	sh -c "echo '$out' | grep -q 'Connection refused'"

# Loopback: this host's own processes are refused too.
out=$(in_s timeout 20 ssh $SSH_OPTS -o ConnectTimeout=5 root@127.0.0.1 true 2>&1) || true
check "plain ssh to 127.0.0.1:22 on the host: Connection refused" \
	sh -c "echo '$out' | grep -q 'Connection refused'"

# With the daemon stopped (on_stop hide), the kernel gives the same answer.
KGW_PID=$SRV_PID
stop_knockgw
refused_without_daemon stopped 2200
nmap_every "stopped, IPv4, the published port" $S4 2200
nmap_every "stopped, IPv6, the published port" $S6 2200
check "the other table (docker) is untouched" in_s nft list table inet docker
# Docker re-creates its table after ours (nat chains of one priority run
# newest first): still no way past the refusal.
in_s nft list table inet docker >"$TMP/docker.nft"
in_s nft delete table inet docker
in_s nft -f "$TMP/docker.nft"
check "stopped, docker's table re-created after ours: a plain SYN to 2200 is still refused" \
	like_closed redocker $C4 $S4 2200 01020304 --tsval 95
finish
