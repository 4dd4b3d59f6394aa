#!/bin/sh
# Integrity mode end to end: an unmodified ssh with knock-connect as its
# ProxyCommand gets in (knock-connect reads ssh's banner first, hands it to
# the client-side knockgw, whose SYN then carries the integrity hash); the
# same connection with its first payload byte tampered on the wire is reset
# and sshd never logs the tampered banner; a transparent ssh to that
# destination is refused at once with a log line pointing to knock-connect.
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
K=$(key_file k)
knock_conf "$TMP/client.conf" "integrity_len = 20;"
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID
start_server "$(entry 22 "integrity_len = 20;")"

SSH="ssh $SSH_OPTS -o ConnectTimeout=10"
PROXY="ProxyCommand=$KC -s $TMP/client.sock -w 10 %h %p"
for dst in $S4 $S6; do
	out=$(in_c $SSH -o "$PROXY" root@$dst echo integrity-ok 2>"$TMP/ssh.err") || true
	check "ssh via knock-connect to $dst in integrity mode runs a command" \
		[ "$out" = integrity-ok ]
	[ "$out" = integrity-ok ] || cat "$TMP/ssh.err"
done
check "the client daemon used knock-connect's intents" [ "$(ccounter client_intents_used)" -ge 2 ]
check "the server verified the first bytes" [ "$(counter integ_ok)" -ge 2 ]

# The same, with the first payload byte rewritten on the wire ('S' -> 'X').
tamper_first_byte 22
in_c $SSH -o "$PROXY" root@$S4 echo tampered >"$TMP/t.out" 2>"$TMP/t.err" || true
untamper
check "a tampered connection does not run the command" sh -c "! grep -q tampered '$TMP/t.out'"
check "the tampered connection was reset" grep -qi "reset\|closed\|refused" "$TMP/t.err"
check "the server counted an integrity failure" [ "$(counter integ_fail)" -ge 1 ]
sleep 0.5
check "sshd never logged the tampered banner" sh -c "! grep -q 'XSH-2.0' '$TMP/sshd.log'"

# Transparent ssh to an integrity destination cannot work: refused, explained.
start=$(date +%s)
in_c $SSH root@$S4 true >"$TMP/plain.out" 2>&1 || true
took=$(($(date +%s) - start))
check "a transparent ssh to an integrity destination is refused" \
	grep -q "Connection refused" "$TMP/plain.out"
check "refused at once (${took}s), not after a timeout" [ "$took" -le 3 ]
check "the log says to use knock-connect" grep -q "knock-connect" "$TMP/knockgw-$NS_C.log"
check "the refusal was counted" [ "$(ccounter client_integrity_refused)" -ge 1 ]
finish
