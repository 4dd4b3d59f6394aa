#!/bin/sh
# Gateway client role (`from` in a knock entry): a router knocks for the
# hosts of its LAN.  An unmodified ssh/scp on the LAN host reaches an sshd
# that knockgw protects behind the router, which masquerades the LAN out:
# v4 and v6, kernel path and translate = "user", bulk data byte-exact.  A
# LAN address not in `from` is refused (the server's RST: its SYN goes
# unknocked), the router's own ssh is knocked as before and its other
# traffic is not queued, the server sees only the router's address, print-rules
# and the installed table agree, and after kill -9 of the router's knockgw
# an established scp goes on (kernel path) while new LAN SYNs are dropped,
# never let through unknocked.
#
#   LAN $NS_L                 router $NS_R                    server $NS_S
#   l0 10.0.0.2, .3 /24  ---  r0 10.0.0.1/24  r1 203.0.113.1/24  ---  s1 203.0.113.2/24
#      fd00::2, ::3 /64          fd00::1/64      2001:db8:5::1/64        2001:db8:5::2/64
#   ssh, scp                  knockgw (from = .2, ::2)           sshd :22, knockgw
#                             masquerade out of r1               (protect 22), socat :8080
# The server has no route to the LAN: only masqueraded flows get answers.
. "$(dirname "$0")/lib/lib.sh"

NS_L=$PFX-1
NS_R=$PFX-3
L4=10.0.0.2 L4B=10.0.0.3 L6=fd00::2 L6B=fd00::3
R4=203.0.113.1 R6=2001:db8:5::1
S4=203.0.113.2 S6=2001:db8:5::2
in_l() { ip netns exec "$NS_L" "$@"; }
in_r() { ip netns exec "$NS_R" "$@"; }

# make_gw_topology: the three namespaces above, the router masquerading.
make_gw_topology() {
	for ns in "$NS_L" "$NS_R" "$NS_S"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip link add l0 netns "$NS_L" type veth peer name r0 netns "$NS_R"
	ip link add r1 netns "$NS_R" type veth peer name s1 netns "$NS_S"
	in_l ip addr add $L4/24 dev l0
	in_l ip addr add $L4B/24 dev l0
	in_l ip addr add $L6/64 dev l0 nodad
	# Deprecated: never the source the LAN host picks unless bound to it.
	in_l ip addr add $L6B/64 dev l0 nodad preferred_lft 0
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
}

make_gw_topology
start_sshd
in_s socat -T 20 TCP6-LISTEN:8080,ipv6only=0,fork,reuseaddr SYSTEM:'echo open-8080' >/dev/null 2>&1 &
PIDS="$PIDS $!"
listening 8080
K=$(key_file k)
start_server "$(entry 22)"
SRV_PID=$KGW_PID

# syns: the SYNs the router's daemon decided about (knocked or not).
syns() {
	echo $(($(counter client_knocked "$NS_R") + $(counter client_no_entry "$NS_R") +
		$(counter client_retransmits "$NS_R")))
}

# gw_conf FILE TRANSLATE: the router's configuration.
gw_conf() {
	cat >"$1" <<EOC
translate = "$2";
control_socket = "$TMP/gw-$2.sock";
keys = ( { name = "k"; file = "$K"; } );
knock = (
	{ dst = "$S4"; port = 22; mode = "native"; key = "k"; from = [ "$L4/32", "fd00::2/128" ]; },
	{ dst = "$S6"; port = 22; mode = "native"; key = "k"; from = [ "$L4/32", "fd00::2/128" ]; },
	{ dst = "$R4"; port = 22; mode = "native"; key = "k"; from = [ "$L4/32", "fd00::2/128" ]; },
	{ dst = "$R6"; port = 22; mode = "native"; key = "k"; from = [ "$L4/32", "fd00::2/128" ]; }
);
EOC
	chmod 600 "$1"
}

SSH="ssh $SSH_OPTS -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3"
SCP="scp -q $SSH_OPTS -o ConnectTimeout=10"
head -c 4000000 /dev/urandom >"$TMP/src.bin"
want=$(sha256sum <"$TMP/src.bin" | cut -d' ' -f1)

for kind in kernel user; do
	gw_conf "$TMP/gw-$kind.conf" $kind
	start_knockgw "$NS_R" "$TMP/gw-$kind.conf"
	GW_PID=$KGW_PID
	for dst in $S4 $S6; do
		case $dst in
		*:*) fam=v6 bdst="[$dst]" other=$L6B router="[$R6]" ;;
		*) fam=v4 bdst=$dst other=$L4B router=$R4 ;;
		esac
		out=$(in_l timeout 60 $SSH root@$dst echo knocked 2>"$TMP/ssh.err") || true
		check "$kind $fam: ssh from the LAN host runs a command" [ "$out" = knocked ]
		[ "$out" = knocked ] || cat "$TMP/ssh.err" "$TMP/knockgw-$NS_R.log" >&2
		rm -f "$TMP/dst-$kind-$fam.bin"
		in_l timeout 90 $SCP "$TMP/src.bin" "root@$bdst:$TMP/dst-$kind-$fam.bin" \
			>"$TMP/scp.log" 2>&1 || cat "$TMP/scp.log" >&2
		check "$kind $fam: 4 MB up by scp arrive byte-exact" \
			[ "$(sha256sum <"$TMP/dst-$kind-$fam.bin" | cut -d' ' -f1)" = "$want" ]
		got=$(in_l timeout 90 $SSH root@$dst "cat '$TMP/src.bin'" 2>/dev/null |
			sha256sum | cut -d' ' -f1) || true
		check "$kind $fam: 4 MB down over ssh arrive byte-exact" [ "$got" = "$want" ]
		before=$(counter syn_refused)
		in_l timeout 20 $SSH -b $other root@$dst true >"$TMP/other.log" 2>&1 || true
		check "$kind $fam: a LAN address not in from is refused (RST: connection refused)" \
			grep -q "Connection refused" "$TMP/other.log"
		check "$kind $fam: ... by the server, as an unknocked SYN" \
			[ "$(counter syn_refused)" -gt "$before" ]
		out=$(in_r timeout 60 $SSH root@$dst echo own 2>/dev/null) || true
		check "$kind $fam: the router's own ssh is knocked as before" [ "$out" = own ]
		# SYNs the router's daemon saw (queue totals would count the late
		# segments of the user path's flows above too).
		q0=$(syns)
		out=$(in_r timeout 20 socat -T 10 - TCP:$bdst:8080 </dev/null 2>/dev/null) || true
		check "$kind $fam: the router's own connection elsewhere works" [ "$out" = open-8080 ]
		out=$(in_l timeout 20 socat -T 10 - TCP:$bdst:8080 </dev/null 2>/dev/null) || true
		check "$kind $fam: the LAN host's connection elsewhere works" [ "$out" = open-8080 ]
		# A knock entry covers the router's own address: a SYN to it is not routed.
		in_l timeout 20 socat -T 5 - TCP:$router:22 </dev/null >"$TMP/own.log" 2>&1 || true
		check "$kind $fam: a LAN SYN to the router itself gets its kernel's RST" \
			grep -q "Connection refused" "$TMP/own.log"
		check "$kind $fam: ... and the router's daemon saw none of these SYNs" \
			[ "$(syns)" = "$q0" ]
	done
	check "$kind: the router knocked for the LAN host" [ "$(counter client_knocked "$NS_R")" -ge 4 ]
	if [ $kind = kernel ]; then
		check "kernel path: the router queued nothing but SYNs" \
			[ "$(qcounter queued "$NS_R")" -le 12 ]
	else
		check "user path: the router translated the routed flows both ways" \
			[ "$(counter client_translated_out "$NS_R")" -gt 0 ] &&
			[ "$(counter client_translated_in "$NS_R")" -gt 0 ]
		# print-rules and the installed table are one plan (as in 0008).
		in_r "$KNOCKGW" print-rules -c "$TMP/gw-$kind.conf" >"$TMP/print.txt"
		toq() { sed 's/queue num \([0-9-]*\)\( bypass\)\{0,1\}$/comment "queue num \1\2"/'; }
		if grep -q "lacks nft's queue expression" "$TMP/print.txt"; then q=toq; else q=cat; fi
		ip netns add "$PFX-4"
		$q <"$TMP/print.txt" >"$TMP/print.nft"
		check "nft -f loads print-rules' output" ip netns exec "$PFX-4" nft -f "$TMP/print.nft"
		ip netns exec "$PFX-4" nft list table inet knockgw 2>/dev/null | strip >"$TMP/p.nft"
		in_r nft list table inet knockgw 2>/dev/null | strip | $q >"$TMP/t.nft"
		check "print-rules' gateway rules, loaded by nft, list as the daemon's table" \
			diff -u "$TMP/p.nft" "$TMP/t.nft"
		check "... and they are there" grep -q "chain forward_user" "$TMP/t.nft"
	fi
	stop_knockgw "$GW_PID"
done

# kill -9 of the router's daemon on the kernel path: an open scp goes on,
# a new SYN from the LAN is dropped (queued to nobody), never sent unknocked.
for dst in $S4 $S6; do
	case $dst in *:*) fam=v6 bdst="[$dst]" ;; *) fam=v4 bdst=$dst ;; esac
	start_knockgw "$NS_R" "$TMP/gw-kernel.conf"
	rm -f "$TMP/kill.bin"
	# 4 MB at 3200 kbit/s: about ten seconds on the wire.
	in_l timeout 90 $SCP -l 3200 "$TMP/src.bin" "root@$bdst:$TMP/kill.bin" >"$TMP/scp.log" 2>&1 &
	scp_pid=$!
	wait_for 20 sh -c "[ -s '$TMP/kill.bin' ]"
	sleep 1
	kill -9 "$KGW_PID"
	wait_for 5 sh -c "! kill -0 $KGW_PID"
	before=$(counter syn_refused)
	in_l timeout 20 $SSH -o ConnectTimeout=3 root@$dst true >"$TMP/after.log" 2>&1 || true
	check "$fam after kill -9: a new ssh from the LAN does not connect" \
		grep -q "timed out" "$TMP/after.log"
	check "$fam after kill -9: its SYN never reached the server" \
		[ "$(counter syn_refused)" = "$before" ]
	if wait "$scp_pid"; then rc=0; else rc=$?; fi
	check "$fam after kill -9: the open scp finished (rc $rc)" [ $rc = 0 ]
	check "$fam after kill -9: its copy is byte-exact" \
		[ "$(sha256sum <"$TMP/kill.bin" | cut -d' ' -f1)" = "$want" ]
done
# The server saw the router's address only: the routed flows were masqueraded.
check "sshd saw connections from the router's addresses" \
	sh -c "grep -q 'Connection from $R4 ' '$TMP/sshd.log' && grep -q 'Connection from $R6 ' '$TMP/sshd.log'"
check "sshd never saw a LAN address" sh -c "! grep -Eq 'Connection from (10\\.0\\.0\\.|fd00:)' '$TMP/sshd.log'"
KGW_PID=$SRV_PID
check "the server's daemon stayed up" kill -0 "$SRV_PID"
finish
