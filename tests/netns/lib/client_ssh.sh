#!/bin/sh
# The body of tests 0005 and 0006, which exec it with the translation path
# as $1.
# Client role: an unmodified ssh in the client namespace reaches an sshd that
# knockgw protects in the server namespace, because the client-side knockgw
# gives its SYNs the knock ISN and translates the flow; knock and native
# modes, IPv4 and IPv6, on the translation path given as $1 (kernel|user).
# Bulk data both ways arrives intact, and the server queued nothing but SYNs.
# lib.sh finds the tree from $0, which is this file here: one folder deeper.
TOP=${TOP:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$(dirname "$0")/lib.sh"
PATH_KIND=${1:-kernel}

make_topology
start_sshd
start_sshd2

K=$(key_file k)
two_port_server_conf "$TMP/server.conf"
# Destinations as prefixes: an entry matches every address in it.
two_port_client_conf "$TMP/client.conf" "$PATH_KIND" "$TMP/client.sock" 192.0.2.0/24 2001:db8::/64
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID
start_knockgw "$NS_S" "$TMP/server.conf"

# ServerAlive: if the client daemon dies on the user path, an established
# session hangs (its packets are queued to nobody); fail in 15 s, not ~15 min.
SSH="ssh $SSH_OPTS -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3"
for dst in $S4 $S6; do
	for port in 22 2222; do
		out=$(in_c timeout 60 $SSH -p $port root@$dst echo knocked-$port 2>"$TMP/ssh.err") || true
		check "$PATH_KIND: unmodified ssh to $dst port $port runs a command" \
			[ "$out" = "knocked-$port" ]
		[ "$out" = "knocked-$port" ] || cat "$TMP/ssh.err"
	done
done

# 30 MB of random data up and down, compared by sha256.
head -c ${BULK_BYTES:-30000000} /dev/urandom >"$TMP/up.bin"
up=$(sha256sum <"$TMP/up.bin" | cut -d' ' -f1)
got=$(in_c timeout ${BULK_TIMEOUT:-120} $SSH root@$S4 "sha256sum" <"$TMP/up.bin" 2>/dev/null | cut -d' ' -f1) || true
check "$PATH_KIND: 30 MB up over ssh arrive intact" [ "$got" = "$up" ]
in_c timeout ${BULK_TIMEOUT:-120} $SSH root@$S6 "cat '$TMP/up.bin'" >"$TMP/down.bin" 2>/dev/null || true
check "$PATH_KIND: 30 MB down over ssh arrive intact" \
	[ "$(sha256sum <"$TMP/down.bin" | cut -d' ' -f1)" = "$up" ]

# Six ssh connections: six SYNs, maybe a retransmission or two.
check "the server queued only SYNs (established transfers stay in the kernel)" \
	[ "$(qcounter queued)" -le 10 ]
check "the client knocked every connection" [ "$(ccounter client_knocked)" -ge 6 ]
if [ "$PATH_KIND" = kernel ]; then
	check "kernel path: the client queued nothing but SYNs" \
		[ "$(qcounter queued "$NS_C" "$CLI_PID")" -le 10 ]
fi
if [ "$PATH_KIND" = user ]; then
	# GSO packets of the bulk transfers came whole and went back uncopied.
	check "user path: large packets were translated (verdicts without a copy)" \
		[ "$(qcounter large_verdicts "$NS_C" "$CLI_PID")" -gt 0 ]
fi
finish
