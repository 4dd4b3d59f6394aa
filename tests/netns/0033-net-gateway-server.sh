#!/bin/sh
# Gateway server role (forward = true): a router protects a host behind it
# that runs nothing but sshd.  A knock for the host gets through the router;
# a SYN without one gets the host's own closed-port answer through the
# router (its TTL/hop limit after the hop, field for field, compared with
# the host's real closed port 23), for every nmap scan type, v4 and v6, with
# the router's daemon running and stopped (on_stop hide).  Integrity mode
# works on the forwarded flow (the held bytes are the client's, on their way
# through).  Traffic to ports and hosts the router does not protect passes.
#
#   client ns $NS_C          router ns $NS_R                host ns $NS_S
#   +---------------+        +------------------------+     +------------------+
#   | vc 192.0.2.2  |--veth--| rc 192.0.2.1           |     | vs 203.0.113.2   |
#   | 2001:db8:c::2 |        |    2001:db8:c::1       |     |  2001:db8:5::2   |
#   | prober, nmap, |        | knockgw: forward entry |-veth|  203.0.113.3     |
#   | ssh, knock-   |        |  for 203.0.113.2 and   |     |  (unprotected)   |
#   | connect       |        |  2001:db8:5::2, 22 and |     | sshd :22, :2222  |
#   +---------------+        |  2222 (integrity 16)   |     | 23 closed        |
#                            | rs 203.0.113.1         |     +------------------+
#                            |    2001:db8:5::1       |
#                            +------------------------+
# (lib.sh's make_router_topology, one more address on the host)
. "$(dirname "$0")/lib/lib.sh"

make_router_topology
OTHER4=203.0.113.3
in_s ip addr add $OTHER4/24 dev vs
quiet_client_rsts
start_sshd
start_sshd2
K=$(key_file k)
cat >"$TMP/knockgw.conf" <<EOC
keys = ( { name = "k"; file = "$K"; } );
protect = (
	{ port = 22; mode = "native"; keys = [ "k" ]; forward = true;
	  addresses = [ "$S4", "$S6" ]; },
	{ port = 2222; mode = "native"; keys = [ "k" ]; forward = true; integrity_len = 16;
	  addresses = [ "$S4", "$S6" ]; }
);
limits = { integrity_timeout = 2; };
EOC
chmod 600 "$TMP/knockgw.conf"
start_knockgw "$NS_R" "$TMP/knockgw.conf"
RTR=$KGW_PID

for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
	check "IPv$fam: a knock for the host gets the host's SYN-ACK through the router" \
		knock_gets SA "$K" 22 $src $dst
	check "IPv$fam: a plain SYN gets the host's closed-port RST through the router, field for field" \
		like_closed plain$fam $src $dst 22 01020304 --tsval 77
	check "IPv$fam: so does a knock with the wrong key" \
		like_closed wkey$fam $src $dst 22 "$(isn native "$(key_file w)" $dst 22 78)" --tsval 78
	nmap_every "IPv$fam routed" $dst
done
check "the refusals went to the host's closed port" [ "$(counter nat_refusals "$NS_R")" -ge 4 ]
check "a port the router does not protect passes (the host's sshd on 2222 to $OTHER4)" \
	plain_gets SA 2222 $C4 $OTHER4
check "a host the router does not protect passes ($OTHER4:22)" plain_gets SA 22 $C4 $OTHER4

# Real clients: the client role knocks for ssh; knock-connect (integrity
# mode, on 2222) goes through the client's daemon.
cat >"$TMP/kc.conf" <<EOC
control_socket = "$TMP/client.sock";
keys = ( { name = "k"; file = "$K"; } );
knock = ( { dst = "$S4"; port = 22; mode = "native"; key = "k"; },
	  { dst = "$S6"; port = 22; mode = "native"; key = "k"; },
	  { dst = "$S4"; port = 2222; mode = "native"; key = "k"; integrity_len = 16; },
	  { dst = "$S6"; port = 2222; mode = "native"; key = "k"; integrity_len = 16; } );
EOC
chmod 600 "$TMP/kc.conf"
start_knockgw "$NS_C" "$TMP/kc.conf"
CLI=$KGW_PID
for dst in $S4 $S6; do
	for port in 22 2222; do
		out=$(in_c timeout 20 ssh $SSH_OPTS -p $port \
			-o ProxyCommand="$KC -c $TMP/kc.conf %h %p" root@$dst echo routed-ok \
			2>"$TMP/ssh.err") || true
		check "ssh -p $port $dst with knock-connect through the router" [ "$out" = routed-ok ]
	done
done
stop_knockgw "$CLI"
in_c "$KNOCKGW" flush -c "$TMP/kc.conf" >/dev/null
out=$(in_c timeout 20 ssh $SSH_OPTS -o ConnectTimeout=5 root@$S4 true 2>&1) || true
check "plain ssh to the host: Connection refused" sh -c "echo '$out' | grep -q 'Connection refused'"

# Integrity on the forwarded flow: bytes tampered on the wire never reach the host.
start_knockgw "$NS_C" "$TMP/kc.conf"
CLI=$KGW_PID
tamper_first_byte 2222
out=$(in_c timeout 20 ssh $SSH_OPTS -p 2222 -o ProxyCommand="$KC -c $TMP/kc.conf %h %p" \
	root@$S4 echo tampered 2>&1) || true
untamper
check "integrity, tampered on the wire: no session" [ "$out" != tampered ]
check "... the host's sshd never read the tampered banner" \
	sh -c "! grep -q 'XSH-2.0' '$TMP/sshd2.log'"
check "... counted as an integrity failure" [ "$(counter integ_fail "$NS_R")" -ge 1 ]

# Stopped, the kernel still hides the host behind the router.
stop_knockgw "$CLI"
in_c "$KNOCKGW" flush -c "$TMP/kc.conf" >/dev/null
stop_knockgw "$RTR"
refused_without_daemon "stopped (the host's closed port)" 22
nmap_every "stopped, IPv4" $S4
nmap_every "stopped, IPv6" $S6
finish
