#!/bin/sh
# make demo: knockgw live, in network namespaces it makes and removes.
#
#   client ns 192.0.2.1 / 2001:db8::1  ----veth----  server ns 192.0.2.2 / 2001:db8::2
#   ssh, nmap, knock-connect,                        an unmodified OpenSSH sshd,
#   knockgw (client role)                            knockgw (server role)
#                                                    198.51.100.2
#   LAN host ns 10.0.0.2 ---- router ns 10.0.0.1 | 198.51.100.1 --+
#   plain ssh, nothing else   knockgw knocking for the LAN (from),
#                             masquerade
#
# Nothing outside the namespaces is touched; everything is removed at the
# end, also on Ctrl-C or failure.
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/netns/lib/lib.sh"
set +e

bold=$(printf '\033[1m')
dim=$(printf '\033[2m')
off=$(printf '\033[0m')
[ -t 1 ] || { bold=; dim=; off=; }
say() { printf '\n%s==> %s%s\n' "$bold" "$*" "$off"; }
show() { printf '%s$ %s%s\n' "$dim" "$*" "$off"; }
# sshd runs at LogLevel DEBUG1 (the tests read the client banner in its log);
# its session debug lines are noise here.
run_c() { show "$*"; in_c "$@" 2>&1 | grep -v '^debug1:'; }
SSH="ssh $SSH_OPTS -o LogLevel=ERROR -o ConnectTimeout=5"

say "Two hosts in network namespaces: client $C4, server $S4 (and IPv6)"
make_topology
start_sshd
start_sshd2
echo "An unmodified OpenSSH sshd listens on ports 22 and 2222 of the server."

say "Without knockgw, a port scan finds it"
run_c nmap -Pn -n -sS -p 22,23,2222 $S4 | grep tcp

say "A shared key, and the server role protecting port 22 (and 2222 in integrity mode)"
show "knockgw genkey > alice.key"
K=$(key_file alice)
cat >"$TMP/server.conf" <<EOC
control_socket = "$TMP/server.sock";
keys = ( { name = "alice"; file = "$K"; } );
protect = (
	{ port = 22; mode = "native"; keys = [ "alice" ]; },
	{ port = 2222; mode = "native"; keys = [ "alice" ]; integrity_len = 20; }
);
EOC
sed 's/^/    /' "$TMP/server.conf"
start_knockgw "$NS_S" "$TMP/server.conf"
SRV=$KGW_PID
echo "knockgw runs in the server namespace; its nft table (knockgw print-rules):"
in_s "$KNOCKGW" print-rules -c "$TMP/server.conf" | grep -E 'dport|chain' | sed 's/^/    /'

say "Now every scan type sees a closed port, exactly like port 23"
for scan in sS sF sA sX; do
	run_c nmap -Pn -n -$scan -p 22,23 $S4 | grep tcp
done

say "A plain ssh, without the key, is refused"
run_c $SSH root@$S4 true

say "The client role: the same unmodified ssh, with knockgw knocking its SYNs"
cat >"$TMP/client.conf" <<EOC
control_socket = "$TMP/client.sock";
keys = ( { name = "alice"; file = "$K"; } );
knock = (
	{ dst = "192.0.2.0/24"; port = 22; mode = "native"; key = "alice"; },
	{ dst = "$S6"; port = 22; mode = "native"; key = "alice"; },
	{ dst = "$S4"; port = 2222; mode = "native"; key = "alice"; integrity_len = 20; }
);
EOC
sed 's/^/    /' "$TMP/client.conf"
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID
run_c $SSH root@$S4 'echo "logged in to $(hostname) over IPv4"'
run_c $SSH root@$S6 'echo "logged in over IPv6"'
echo "The server's log:"
grep 'accepted with key' "$TMP/knockgw-$NS_S.log" | tail -2 | sed 's/^/    /'
head -c 20000000 /dev/urandom >"$TMP/blob"
show "scp a 20 MB file and compare checksums"
in_c scp -q $SSH_OPTS -o LogLevel=ERROR "$TMP/blob" "root@$S4:$TMP/blob.copy"
sha256sum "$TMP/blob" "$TMP/blob.copy" | sed "s|$TMP/||"
echo "The established transfer never went through user space: the server queued" \
	"$(qcounter queued "$NS_S" "$SRV") packets in all (the SYNs)."

say "Integrity mode (port 2222): knock-connect as ssh's ProxyCommand"
echo "It reads ssh's first 20 bytes, the client daemon puts their hash in the ISN, and"
echo "the server holds them until they match."
run_c $SSH -p 2222 -o "ProxyCommand=$KC -s $TMP/client.sock %h %p" root@$S4 \
	'echo "integrity-checked session on port 2222"'

say "A man in the middle changes the first byte on the wire (an nft payload rule)"
in_c nft -f - <<EOR
table inet tamper {
	chain out {
		type filter hook output priority 0; policy accept;
		tcp dport 2222 tcp flags & (syn | rst) == 0 @ih,0,8 set 0x58
	}
}
EOR
run_c $SSH -p 2222 -o "ProxyCommand=$KC -s $TMP/client.sock %h %p" root@$S4 true
in_c nft delete table inet tamper
echo "The server's log:"
grep 'integrity check failed' "$TMP/knockgw-$NS_S.log" | tail -1 | sed 's/^/    /'
if grep -q 'XSH-2.0' "$TMP/sshd2.log"; then
	echo "sshd saw the tampered banner (this should not happen)"
else
	echo "sshd never received a byte of the tampered connection."
fi

say "What the server daemon counted (knockgw status)"
show "knockgw status"
in_s "$KNOCKGW" status -c "$TMP/server.conf" | sed -n '1,2p;/^port/p'

say "A router knocks for a LAN host that runs nothing (a phone, a Windows box)"
NS_R=$PFX-3
NS_L=$PFX-4
in_r() { ip netns exec "$NS_R" "$@"; }
in_l() { ip netns exec "$NS_L" "$@"; }
ip netns add "$NS_R"
ip netns add "$NS_L"
ip link add lr netns "$NS_L" type veth peer name rl netns "$NS_R"
ip link add rs netns "$NS_R" type veth peer name sr netns "$NS_S"
in_l ip addr add 10.0.0.2/24 dev lr
in_r ip addr add 10.0.0.1/24 dev rl
in_r ip addr add 198.51.100.1/24 dev rs
in_s ip addr add 198.51.100.2/24 dev sr
for l in "$NS_L lr" "$NS_R rl" "$NS_R rs" "$NS_S sr"; do
	set -- $l
	ip -n "$1" link set lo up
	ip -n "$1" link set "$2" up
done
in_l ip route add default via 10.0.0.1
in_r sysctl -qw net.ipv4.ip_forward=1
in_r nft add table inet lan
in_r nft add chain inet lan post '{ type nat hook postrouting priority srcnat; }'
in_r nft add rule inet lan post ip saddr 10.0.0.0/24 oifname rs masquerade
wait_for 5 in_l ping -c1 -W1 198.51.100.2
echo "The LAN host 10.0.0.2 reaches the server's 198.51.100.2 through the router."
show "ssh root@198.51.100.2    (from the LAN host, nothing knocks yet)"
in_l $SSH root@198.51.100.2 true 2>&1 | grep -v '^debug1:'
cat >"$TMP/router.conf" <<EOC
control_socket = "$TMP/router.sock";
keys = ( { name = "alice"; file = "$K"; } );
knock = ( { dst = "198.51.100.2"; port = 22; mode = "native"; key = "alice";
	    from = [ "10.0.0.0/24" ]; } );
EOC
echo "The router's knockgw.conf:"
sed 's/^/    /' "$TMP/router.conf"
start_knockgw "$NS_R" "$TMP/router.conf"
RTR=$KGW_PID
show "ssh root@198.51.100.2    (from the LAN host again, unmodified)"
in_l $SSH root@198.51.100.2 'echo "logged in from the LAN host, knocked by the router"' 2>&1 |
	grep -v '^debug1:'

say "The daemon's own life never shows sshd (on_stop = \"hide\", the default)"
show "kill -TERM <server knockgw>    (systemctl stop knockgw)"
kill "$SRV"
wait_for 5 sh -c "! kill -0 $SRV"
echo "Its table stays; the kernel alone answers every SYN like a closed port:"
for scan in sS sA; do
	run_c nmap -Pn -n -$scan -p 22,23 $S4 | grep tcp
done
show "knockgw flush    (removes the table by hand)"
in_s "$KNOCKGW" flush -c "$TMP/server.conf"

say "Done: stopping the daemons and removing the namespaces"
kill "$CLI_PID" "$RTR"
wait_for 5 sh -c "! kill -0 $RTR"
