#!/bin/sh
# A NAT outside the server: protect entries' "public" destinations.  The
# router does 1:1 NAT (198.51.100.1 -> the server's 203.0.113.2, and
# 2001:db8:1::1 -> 2001:db8:5::2) and port forwards (198.51.100.1:2200 and
# [2001:db8:1::1]:2200 -> port 22, 198.51.100.1:2220 -> port 2022), so the
# knock a client computes for what it dialled arrives at another address
# and port.  Without "public" such knocks are refused; with it they reach
# sshd, native and knock mode, IPv4 and IPv6, through the client role and
# in integrity mode through knock-connect.  A plain SYN through the NAT, a
# knock for a port or address not in the list, and a replayed knock all get
# the closed-port RST, field for field.
#
#   client ns                    router ns                    server ns
#   192.0.2.2 (.3)  ----  NAT 198.51.100.1  -> 203.0.113.2  ----  sshd :22 :2222 :2022
#   2001:db8:c::2 (::3)      2001:db8:1::1  -> 2001:db8:5::2      knockgw (protect)
#   knockgw (knock), ssh,    :2200 -> :22, :2220 -> :2022 (v4)
#   knock-connect, prober    [..1::1]:2200 -> :22 (v6)
. "$(dirname "$0")/lib/lib.sh"

P4=198.51.100.1
P6=2001:db8:1::1
make_router_topology
in_c ip addr add 192.0.2.3/24 dev vc
in_c ip addr add 2001:db8:c::3/64 dev vc nodad
in_r nft -f - <<EOR
table inet pubnat {
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr $P4 tcp dport 2200 dnat ip to $S4:22
		ip daddr $P4 tcp dport 2220 dnat ip to $S4:2022
		ip daddr $P4 dnat ip to $S4
		ip6 daddr $P6 tcp dport 2200 dnat ip6 to [$S6]:22
		ip6 daddr $P6 dnat ip6 to $S6
	}
}
EOR
quiet_client_rsts
start_sshd
start_sshd2
in_s /usr/sbin/sshd -D -e -f "$TMP/sshd_config" -o Port=2022 -o PidFile="$TMP/sshd3.pid" \
	>"$TMP/sshd3.log" 2>&1 &
PIDS="$PIDS $!"
listening 2022

K=$(key_file k)
# server_conf PUB22 PUB2222 PUB2022: the server's configuration, the public
# lists of its three entries given (empty: the entry has no "public").
server_conf() {
	cat >"$TMP/knockgw.conf" <<EOC
control_socket = "$TMP/server.sock";
keys = ( { name = "k"; file = "$K"; }, { name = "legacy"; secret = "$SECRET"; } );
protect = (
	{ port = 22; mode = "native"; keys = [ "k" ];${1:+ public = [ $1 ];} },
	{ port = 2222; mode = "knock"; keys = [ "legacy" ];${2:+ public = [ $2 ];} },
	{ port = 2022; mode = "native"; keys = [ "k" ]; integrity_len = 20;${3:+ public = [ $3 ];} }
);
EOC
	chmod 600 "$TMP/knockgw.conf"	# it holds a secret: owner only
}

# --- without "public": what a NAT outside did to knocks until now ----------
server_conf "" "" ""
start_knockgw "$NS_S" "$TMP/knockgw.conf"
SRV_PID=$KGW_PID
check "without public: a knock for the server's own address gets SYN-ACK" knock_gets SA
check "without public: a knock for $P4 through the 1:1 NAT is refused" \
	knock_gets RA "$K" 22 $C4 $P4
check "without public: a knock for $P4:2200 (port forward) is refused" \
	knock_gets RA "$K" 2200 $C4 $P4

# --- with "public", by reload -----------------------------------------------
server_conf "\"$P4\", \"$P4:2200\", \"$P6\", \"[$P6]:2200\"" "\"$P4\", \"[$P6]:2222\"" \
	"\"$P4:2220\", \"$P6\""
kill -HUP "$SRV_PID"
check "the server reloaded with public destinations" \
	wait_for 5 grep -q '^reloaded' "$TMP/knockgw-$NS_S.log"

for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 pub=$P4 at=$P4 other=192.0.2.3 notpub=198.51.100.9
	else src=$C6 pub=$P6 at="[$P6]" other=2001:db8:c::3 notpub=2001:db8:1::9; fi
	tag="IPv$fam"

	check "$tag: native knock for $at:22 through the 1:1 NAT gets SYN-ACK" \
		knock_gets SA "$K" 22 $src $pub
	check "$tag: native knock for $at:2200 through the port forward gets SYN-ACK" \
		knock_gets SA "$K" 2200 $src $pub
	check "$tag: the server's own address still works" knock_gets SA "$K" 22 $src \
		"$(if [ $fam = 4 ]; then echo $S4; else echo $S6; fi)"
	ts=$((SPORT + 50))
	probe k$fam $src $pub 2222 "$(isn knock "$SECRET" $pub 2222 $ts)" --tsval $ts
	check "$tag: knock-mode knock for $at:2222 through the NAT gets SYN-ACK" answered k$fam SA

	check "$tag: a plain SYN through the NAT gets the closed-port RST" \
		like_closed plain$fam $src $pub 22 01020304
	check "$tag: a plain SYN through the port forward gets the closed-port RST" \
		plain_gets RA 2200 $src $pub
	# A knock for a port the list does not pair with this address, sent
	# through the port forward.
	ts=$((SPORT + 50))
	check "$tag: a knock for $at:2201 (not in public) sent to $at:2200 is refused" \
		like_closed wport$fam $src $pub 2200 "$(isn native "$K" $pub 2201 $ts)" --tsval $ts
	ts=$((SPORT + 50))
	check "$tag: a knock for $notpub (not in public) is refused like a closed port" \
		like_closed npub$fam $src $pub 22 "$(isn native "$K" $notpub 22 $ts)" --tsval $ts
	ts=$((SPORT + 50))
	check "$tag: a knock-mode knock for a port not listed for it is refused" \
		like_closed kport$fam $src $pub 2222 "$(isn knock "$SECRET" $pub 22 $ts)" --tsval $ts

	# Replay: a knock for the public destination seen from $src, then the
	# same SYN from another address.
	v=$(isn native "$K" $pub 2200 777$fam)
	probe r1$fam $src $pub 2200 "$v" --tsval 777$fam
	check "$tag: first use of a knock for $at:2200 gets SYN-ACK" answered r1$fam SA
	check "$tag: the same knock from another address gets the closed-port RST" \
		like_closed r2$fam $other $pub 2200 "$v" --tsval 777$fam
done
check "the server counted the replays" [ "$(counter replay_refused)" = 2 ]

# --- unmodified ssh through the client role, and knock-connect ---------------
cat >"$TMP/client.conf" <<EOC
control_socket = "$TMP/client.sock";
keys = ( { name = "k"; file = "$K"; }, { name = "legacy"; secret = "$SECRET"; } );
knock = (
	{ dst = "$P4"; port = 22; mode = "native"; key = "k"; },
	{ dst = "$P4"; port = 2200; mode = "native"; key = "k"; },
	{ dst = "$P6"; port = 22; mode = "native"; key = "k"; },
	{ dst = "$P6"; port = 2200; mode = "native"; key = "k"; },
	{ dst = "$P4"; port = 2222; mode = "knock"; key = "legacy"; },
	{ dst = "$P6"; port = 2222; mode = "knock"; key = "legacy"; },
	{ dst = "$P4"; port = 2220; mode = "native"; key = "k"; integrity_len = 20; },
	{ dst = "$P6"; port = 2022; mode = "native"; key = "k"; integrity_len = 20; }
);
EOC
chmod 600 "$TMP/client.conf"
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID

SSH="ssh $SSH_OPTS -o ConnectTimeout=10"
PROXY="ProxyCommand=$KC -s $TMP/client.sock -w 10 %h %p"
# via DESC ARGS...: ssh ARGS (ending in the host) runs a command through the NAT.
via() {
	v_desc=$1
	shift
	v_out=$(in_c $SSH "$@" echo public-ok 2>"$TMP/ssh.err") || true
	check "$v_desc" [ "$v_out" = public-ok ]
	[ "$v_out" = public-ok ] || cat "$TMP/ssh.err"
}
via "ssh to $P4 (1:1 NAT, native) gets in" root@$P4
via "ssh -p 2200 to $P4 (port forward, native) gets in" -p 2200 root@$P4
via "ssh to $P6 (1:1 NAT, native) gets in" root@$P6
via "ssh -p 2200 to $P6 (port forward, native) gets in" -p 2200 root@$P6
via "ssh -p 2222 to $P4 (knock mode) gets in" -p 2222 root@$P4
via "ssh -p 2222 to $P6 (knock mode) gets in" -p 2222 root@$P6
via "integrity: knock-connect to $P4:2220 (port forward) gets in" -o "$PROXY" -p 2220 root@$P4
via "integrity: knock-connect to [$P6]:2022 (1:1 NAT) gets in" -o "$PROXY" -p 2022 root@$P6
check "the server verified integrity bytes for public destinations" \
	[ "$(counter integ_ok)" -ge 2 ]

# Integrity through the port forward, first payload byte tampered on the wire.
tamper_first_byte 2220
in_c $SSH -o "$PROXY" -p 2220 root@$P4 echo tampered >"$TMP/t.out" 2>"$TMP/t.err" || true
untamper
check "integrity: a tampered connection through the NAT does not run the command" \
	sh -c "! grep -q tampered '$TMP/t.out'"
check "integrity: the server counted the failure" [ "$(counter integ_fail)" -ge 1 ]
check "integrity: sshd never logged the tampered banner" \
	sh -c "! grep -q 'XSH-2.0' '$TMP/sshd3.log'"

# An unmodified ssh without the client role: refused like a closed port.
# (A stopped daemon keeps hiding: the client's table goes by hand.)
stop_knockgw "$CLI_PID"
in_c "$KNOCKGW" flush -c "$TMP/client.conf" >/dev/null
in_c $SSH root@$P4 true >"$TMP/plain.out" 2>&1 || true
check "plain ssh through the NAT gets Connection refused" \
	grep -q "Connection refused" "$TMP/plain.out"
check "no secret in the server's log" \
	sh -c "! grep -q -e 'Magic secret' -e \"\$(cat $K)\" '$TMP/knockgw-$NS_S.log'"
finish
