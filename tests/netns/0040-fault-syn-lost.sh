#!/bin/sh
# Fault: the first SYN of a knocked connection is lost on the way (an nft
# quota rule in the server namespace drops it).  The client's kernel sends
# it again with a newer TSval; the client daemon keeps the knock it made for
# the first one (the ISN covers the TSval, so it pins the TSval too) and the
# retransmission must leave with a correct TCP checksum: the connection is
# made at the first retransmission, on both translation paths, IPv4 and
# IPv6, native and knock mode.  The server's kernel counts no checksum error.
# Then the same loss with the client daemon killed and restarted before the
# retransmission: the new daemon's knock must hold for it as well.
#
#   client ns $NS_C                       server ns $NS_S
#   +-----------------------+             +-----------------------------------+
#   | knockgw client role   |---- veth ---| nft: drop the first SYN to 22 and |
#   |   (kernel, then user) |             |   to 2222 (quota, raw prerouting) |
#   | ssh -> 22, 2222       |             | knockgw protects 22, 2222; sshd   |
#   +-----------------------+             +-----------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
start_sshd2

K=$(key_file k)
two_port_server_conf "$TMP/server.conf"
start_knockgw "$NS_S" "$TMP/server.conf"
SRV=$KGW_PID

# One SYN (at most 80 bytes) dropped per rule load, before anything else
# sees it; reloaded before each connection.
lose_next_syn() {
	in_s nft -f - <<-EOR
	table inet synloss
	delete table inet synloss
	table inet synloss {
		chain pre {
			type filter hook prerouting priority -400; policy accept;
			tcp dport { 22, 2222 } tcp flags & (syn | ack) == syn quota until 80 bytes counter drop
		}
	}
	EOR
}
dropped() { in_s nft list table inet synloss | grep -o 'packets [0-9]*' | cut -d' ' -f2; }
SSH="ssh $SSH_OPTS -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3"

for kind in kernel user; do
	two_port_client_conf "$TMP/client-$kind.conf" $kind "$TMP/client.sock" $S4 $S6
	start_knockgw "$NS_C" "$TMP/client-$kind.conf"
	CLI_PID=$KGW_PID
	KGW_PID=$SRV
	before=$(csum_errors)
	for dst in $S4 $S6; do
		for port in 22 2222; do
			lose_next_syn
			out=$(in_c timeout 60 $SSH -p $port root@$dst echo after-loss 2>"$TMP/ssh.err") ||
				true
			check "$kind, $dst port $port: the first SYN was dropped" [ "$(dropped)" = 1 ]
			check "$kind, $dst port $port: the retransmitted SYN gets through" \
				[ "$out" = after-loss ]
			[ "$out" = after-loss ] || sed 's/^/# /' "$TMP/ssh.err"
		done
	done
	check "$kind: the client daemon saw the retransmissions" \
		[ "$(ccounter client_retransmits)" -ge 4 ]
	check "$kind: no TCP checksum error at the server" [ "$(csum_errors)" = "$before" ]
	stop_knockgw "$CLI_PID"
done
in_s nft delete table inet synloss

# The client daemon dies (SIGKILL) after knocking a SYN that is then lost,
# and a new one sees the retransmission: it has no record of the old knock,
# and the conntrack entry the old one made carries the old shift.  The
# retransmission must still leave with a knock that matches its own TSval.
hold_syns() { # drop every SYN to 22 until release_syns
	in_s nft -f - <<-EOR
	table inet synhold {
		chain pre {
			type filter hook prerouting priority -400; policy accept;
			tcp dport 22 tcp flags & (syn | ack) == syn counter drop
		}
	}
	EOR
}
held() { [ "$(in_s nft list table inet synhold | grep -o 'packets [0-9]*' | cut -d' ' -f2)" -ge 1 ]; }
for kind in kernel user; do
	start_knockgw "$NS_C" "$TMP/client-$kind.conf"
	CLI_PID=$KGW_PID
	KGW_PID=$SRV
	hold_syns
	in_c timeout 90 $SSH -o ConnectTimeout=60 root@$S4 echo after-restart \
		>"$TMP/restart.out" 2>"$TMP/restart.err" &
	ssh_pid=$!
	check "$kind, restart: the first SYN was knocked and lost" wait_for 10 held
	kill -9 "$CLI_PID"
	wait_for 5 sh -c "! kill -0 $CLI_PID"
	start_knockgw "$NS_C" "$TMP/client-$kind.conf"
	CLI_PID=$KGW_PID
	KGW_PID=$SRV
	in_s nft delete table inet synhold
	wait "$ssh_pid" || true
	check "$kind, restart: a retransmission the new daemon knocked gets through" \
		grep -qx after-restart "$TMP/restart.out"
	grep -qx after-restart "$TMP/restart.out" || sed 's/^/# /' "$TMP/restart.err"
	stop_knockgw "$CLI_PID"
done
check "the server daemon ran throughout" kill -0 "$SRV"
finish
