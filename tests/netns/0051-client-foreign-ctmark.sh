#!/bin/sh
# translate = "user" beside other users of the conntrack mark, the packet
# mark and conntrack labels.  Where the client role runs (the client itself,
# then a router knocking for it with `from`), another table marks every
# packet of port 22's flows:
#   - `ct mark set ct mark | 0x100` (after conntrack, both ways): once the
#     user path kept the flow's shift in the conntrack mark, this broke every
#     ssh through it (timeout), and knockgw wrote over the other's mark;
#   - `meta mark set meta mark | 0x200` before knockgw's chains (both ways):
#     the packet mark must come out of knockgw's queue as it went in;
#   - `ct label set 1` on the SYN: the labels knockgw keeps its shift in
#     are its own bits only, and the other's label stays on the flow.
# ssh runs a command, 4 MB go up by scp and down by ssh byte-exact, v4 and
# v6; conntrack -L shows the flows' mark as exactly 0x100 (the other table's
# bit kept, none of knockgw's), and counters after knockgw's chains show no
# packet of those flows lost the packet-mark bit or the label.
#
#   client ns $NS_C        router ns $NS_R                      server ns $NS_S
#   +-----------------+    +------------------------------+     +------------------+
#   | vc 192.0.2.2    |----| rc 192.0.2.1  rs 203.0.113.1 |-----| vs 203.0.113.2   |
#   |  2001:db8:c::2  |    | 2001:db8:c::1  2001:db8:5::1 |     |  2001:db8:5::2   |
#   | ssh, scp;       |    | section 2: knockgw (from =   |     | sshd :22,        |
#   | section 1:      |    |   the client), table other   |     | knockgw protects |
#   | knockgw, table  |    +------------------------------+     +------------------+
#   | other           |
#   +-----------------+
. "$(dirname "$0")/lib/lib.sh"

make_router_topology
start_sshd
K=$(key_file k)
start_server "$(entry 22)"
SRV_PID=$KGW_PID

SSH="ssh $SSH_OPTS -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3"
SCP="scp -q $SSH_OPTS -o ConnectTimeout=10"
head -c 4000000 /dev/urandom >"$TMP/src.bin"
want=$(sha256sum <"$TMP/src.bin" | cut -d' ' -f1)

# other NS OUTHOOK INHOOK CHECKIN: table inet other in NS.  Packets of port 22's
# flows get the packet-mark bit 0x200 before knockgw's first chain (OUTHOOK
# for the way out, INHOOK for the way back, priority -400), the conntrack
# mark bit 0x100 after conntrack (-190), and the SYN conntrack label 1;
# after knockgw's chains (postrouting and CHECKIN, 100) each is counted
# kept or lost.
other() {
	ip netns exec "$1" nft -f - <<-EOR
	table inet other {
		counter out_kept {}
		counter out_lost {}
		counter in_kept {}
		counter in_lost {}
		counter label_kept {}
		counter label_lost {}
		chain mark_out {
			type filter hook $2 priority -400; policy accept;
			ip daddr $S4 tcp dport 22 meta mark set meta mark | 0x200
			ip6 daddr $S6 tcp dport 22 meta mark set meta mark | 0x200
		}
		chain mark_in {
			type filter hook $3 priority -400; policy accept;
			ip saddr $S4 tcp sport 22 meta mark set meta mark | 0x200
			ip6 saddr $S6 tcp sport 22 meta mark set meta mark | 0x200
		}
		chain ct_out {
			type filter hook $2 priority -190; policy accept;
			tcp dport 22 ct mark set ct mark | 0x100
			tcp dport 22 tcp flags & (syn | ack) == syn ct label set 1
		}
		chain ct_in {
			type filter hook $3 priority -190; policy accept;
			tcp sport 22 ct mark set ct mark | 0x100
		}
		chain check_out {
			type filter hook postrouting priority 100; policy accept;
			tcp dport 22 meta mark & 0x200 == 0x200 counter name out_kept
			tcp dport 22 meta mark & 0x200 == 0 counter name out_lost
		}
		chain check_in {
			type filter hook $4 priority 100; policy accept;
			tcp sport 22 meta mark & 0x200 == 0x200 counter name in_kept
			tcp sport 22 meta mark & 0x200 == 0 counter name in_lost
			tcp sport 22 ct label 1 counter name label_kept
			tcp sport 22 ct label ! 1 counter name label_lost
		}
	}
	EOR
}

# packets NS COUNTER: the packets counter COUNTER of table other counted.
packets() {
	ip netns exec "$1" nft list counter inet other "$2" |
		sed -n 's/.*packets \([0-9]*\) .*/\1/p'
}

# marks NS: the conntrack marks of NS's flows to port 22, one per line.
marks() {
	ip netns exec "$1" conntrack -L -p tcp --dport 22 2>/dev/null |
		sed -n 's/.* mark=\([0-9]*\) .*/\1/p' | sort -u
}

# traffic TAG RUN: ssh, scp up and ssh down, v4 and v6, from the client
# namespace; RUN runs the client's commands there.
traffic() {
	for dst in $S4 $S6; do
		case $dst in *:*) fam=v6 bdst="[$dst]" ;; *) fam=v4 bdst=$dst ;; esac
		out=$($2 timeout 60 $SSH root@$dst echo knocked 2>"$TMP/ssh.err") || true
		check "$1 $fam: ssh runs a command" [ "$out" = knocked ]
		[ "$out" = knocked ] || cat "$TMP/ssh.err" >&2
		rm -f "$TMP/dst.bin"
		$2 timeout 90 $SCP "$TMP/src.bin" "root@$bdst:$TMP/dst.bin" >"$TMP/scp.log" 2>&1 ||
			cat "$TMP/scp.log" >&2
		check "$1 $fam: 4 MB up by scp arrive byte-exact" \
			[ "$(sha256sum <"$TMP/dst.bin" | cut -d' ' -f1)" = "$want" ]
		got=$($2 timeout 90 $SSH root@$dst "cat '$TMP/src.bin'" 2>/dev/null |
			sha256sum | cut -d' ' -f1) || true
		check "$1 $fam: 4 MB down over ssh arrive byte-exact" [ "$got" = "$want" ]
	done
}

# marks_kept TAG NS: the other table's marks survived knockgw in NS.
marks_kept() {
	m=$(marks "$2" | tr '\n' ' ')
	check "$1: conntrack -L shows the flows' mark as the other table's 0x100 alone ($m)" \
		[ "$m" = "256 " ]
	check "$1: packets went out with the other table's packet-mark bit" \
		[ "$(packets "$2" out_kept)" -gt 0 ]
	check "$1: none went out without it ($(packets "$2" out_lost) did)" \
		[ "$(packets "$2" out_lost)" = 0 ]
	check "$1: packets came back with it" [ "$(packets "$2" in_kept)" -gt 0 ]
	check "$1: none came back without it ($(packets "$2" in_lost) did)" \
		[ "$(packets "$2" in_lost)" = 0 ]
	check "$1: the other table's conntrack label was on the flows" \
		[ "$(packets "$2" label_kept)" -gt 0 ]
	check "$1: ... all the time ($(packets "$2" label_lost) packets without it)" \
		[ "$(packets "$2" label_lost)" = 0 ]
}

# --- 1. the client role on the client itself --------------------------------
other "$NS_C" output prerouting input
knock_conf "$TMP/client.conf" "" 'translate = "user";'
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID
traffic "client role" in_c
check "client role: the client translated the flows (user path)" \
	[ "$(ccounter client_translated_out)" -gt 0 ]
marks_kept "client role" "$NS_C"
stop_knockgw "$CLI_PID"
in_c nft delete table inet knockgw 2>/dev/null || true

# --- 2. the gateway client role on the router -------------------------------
other "$NS_R" prerouting prerouting forward
cat >"$TMP/gw.conf" <<EOC
translate = "user";
control_socket = "$TMP/gw.sock";
keys = ( { name = "k"; file = "$K"; } );
knock = (
	{ dst = "$S4"; port = 22; mode = "native"; key = "k"; from = [ "$C4/32" ]; },
	{ dst = "$S6"; port = 22; mode = "native"; key = "k"; from = [ "$C6/128" ]; }
);
EOC
chmod 600 "$TMP/gw.conf"
start_knockgw "$NS_R" "$TMP/gw.conf"
traffic "gateway" in_c
check "gateway: the router translated the routed flows (user path)" \
	[ "$(counter client_translated_out "$NS_R")" -gt 0 ]
marks_kept "gateway" "$NS_R"

KGW_PID=$SRV_PID
check "the server's daemon stayed up" kill -0 "$SRV_PID"
finish
