#!/bin/sh
# knock-connect's exit codes and messages, and the control socket's checks.
#
#   client ns $NS_C                          server ns $NS_S
#   +--------------------------------+       +---------------------------------+
#   | knockgw (client role), knocks: |       | no knockgw: a knocked SYN to a  |
#   |   192.0.2.77:22 (elsewhere)    |-veth--| closed port gets the kernel's   |
#   |   S4:23, S6:23  auth only      |       | RST; nothing listens on 23, 24  |
#   |   S4:24         integrity 8    |       | nft drops tcp dport 25 (a black |
#   |   S4:25         auth only      |       | hole: no answer at all)         |
#   | knock-connect, ctlreq          |       |                                 |
#   +--------------------------------+       +---------------------------------+
#
# Exit codes (client/kc.h): 2 usage, 3 no daemon, 4 no knock for the
# destination, 5 refused, 6 timed out, 1 when stdin ends before the
# integrity bytes; isn's limit on --integrity-len is the daemon's.  The control
# socket answers INTENT with a socket root made, sent by uid nobody, with
# "ERR not-your-socket", and accepts nobody's own socket.
. "$(dirname "$0")/lib/lib.sh"

NOBODY=65534
CTLREQ=$BUILD/tools/ctlreq
SOCK=$TMP/ctl/control.sock

make_topology
in_s nft -f - <<-EOR
table inet blackhole {
	chain in {
		type filter hook input priority 0; policy accept;
		tcp dport 25 drop
	}
}
EOR

# kc NAME ARGS...: knock-connect in the client namespace, stdin from
# $TMP/NAME.in (empty when absent); exit code, stdout and stderr to files.
kc() {
	kc_name=$1
	shift
	[ -f "$TMP/$kc_name.in" ] || : >"$TMP/$kc_name.in"
	kc_rc=0
	in_c "$@" <"$TMP/$kc_name.in" >"$TMP/$kc_name.out" 2>"$TMP/$kc_name.err" || kc_rc=$?
	echo "$kc_rc" >"$TMP/$kc_name.rc"
	head -n 1 "$TMP/$kc_name.err" | sed "s/^/    $kc_name: /"
}
rc_is() { [ "$(cat "$TMP/$1.rc")" = "$2" ]; }
says() { grep -qF -- "$2" "$TMP/$1.err"; }
AS_NOBODY="setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups"

K=$(key_file k)
cat >"$TMP/client.conf" <<EOC
control_socket = "$SOCK";
keys = ( { name = "k"; file = "$K"; } );
knock = (
	{ dst = "192.0.2.77"; port = 22; mode = "native"; key = "k"; },
	{ dst = "$S4"; port = 23; mode = "native"; key = "k"; },
	{ dst = "$S6"; port = 23; mode = "native"; key = "k"; },
	{ dst = "$S4"; port = 24; mode = "native"; key = "k"; integrity_len = 8; },
	{ dst = "$S4"; port = 25; mode = "native"; key = "k"; }
);
EOC

# --- The integrity limit is the daemon's (INTEG_MAX_LEN, 2048): isn computes
# a knock over 2048 bytes and refuses 2049 as a usage error.
head -c 2049 /dev/zero >"$TMP/payload2049"
kc isn_max "$KC" isn --mode native --key-file "$K" --dst $S4 --port 24 \
	--integrity-len 2048 --payload-file "$TMP/payload2049"
check "isn --integrity-len 2048, the daemon's limit: exit 0" rc_is isn_max 0
check "isn --integrity-len 2048: prints an ISN" grep -Eqx '[0-9a-f]{8}' "$TMP/isn_max.out"
kc isn_over "$KC" isn --mode native --key-file "$K" --dst $S4 --port 24 \
	--integrity-len 2049 --payload-file "$TMP/payload2049"
check "isn --integrity-len 2049, over the limit: exit 2" rc_is isn_over 2
check "isn over the limit: says so" says isn_over "--integrity-len is at most 2048"

# --- Before the daemon runs.
kc usage "$KC"
check "no arguments: exit 2" rc_is usage 2
check "the usage lists the exit codes" says usage "Exit status: 0 relay ended cleanly"
kc nodaemon "$KC" -c "$TMP/client.conf" $S4 23
check "no daemon: exit 3" rc_is nodaemon 3
check "no daemon: says so, naming the socket" \
	says nodaemon "knock-connect: knockgw is not running (no control socket at $SOCK)"
kc nodaemon_s "$KC" -s "$TMP/elsewhere.sock" $S4 23
check "no daemon (-s): exit 3" rc_is nodaemon_s 3

start_knockgw "$NS_C" "$TMP/client.conf"
if ! wait_for 5 test -S "$SOCK"; then
	echo "knockgw does not serve its control socket (yet): the checks below fail" >&2
fi
check "control socket is mode 0666" [ "$(stat -c %a "$SOCK" 2>/dev/null)" = 666 ]
check "its directory was made 0755" [ "$(stat -c %a "$TMP/ctl" 2>/dev/null)" = 755 ]

# --- Exit 4: a knock exists, but for another destination.
kc noknock "$KC" -c "$TMP/client.conf" $S4 22
check "no knock for the destination: exit 4" rc_is noknock 4
check "no knock: says so" says noknock "knock-connect: no knock is configured for $S4 port 22"
kc noknock_user $AS_NOBODY "$KC" -c "$TMP/client.conf" $S4 22
check "no knock, as nobody (config readable, key file not): exit 4" rc_is noknock_user 4

# --- Exit 5: the knocked SYN meets the server's closed port.
kc refused "$KC" -c "$TMP/client.conf" $S4 23
check "closed port behind an auth-only knock: exit 5" rc_is refused 5
check "refused: says so" says refused "connection refused"
kc refused6 "$KC" -c "$TMP/client.conf" $S6 23
check "closed port over IPv6: exit 5" rc_is refused6 5
printf 'SSH-2.0-kc-test\r\n' >"$TMP/refused_integ.in"
kc refused_integ "$KC" -c "$TMP/client.conf" $S4 24
check "integrity knock: intent accepted, then refused: exit 5" rc_is refused_integ 5
cp "$TMP/refused_integ.in" "$TMP/refused_nobody.in"
kc refused_nobody $AS_NOBODY "$KC" -c "$TMP/client.conf" $S4 24
check "integrity knock as nobody: its own socket is accepted: exit 5" rc_is refused_nobody 5

# --- Exit 1: stdin ends before the bytes the integrity knock covers.
printf 'SSH' >"$TMP/short.in"
kc short "$KC" -c "$TMP/client.conf" $S4 24
check "stdin shorter than integrity_len: exit 1" rc_is short 1
check "short stdin: says how much came" says short "stdin ended after 3 of the 8 bytes"

# --- Exit 6: nothing answers at all.
t0=$(date +%s)
kc timeout "$KC" -w 2 -c "$TMP/client.conf" $S4 25
t1=$(date +%s)
check "black hole: exit 6" rc_is timeout 6
check "black hole: says so" says timeout "timed out after 2 s"
elapsed=$((t1 - t0))
check "black hole: gave up after -w 2 (took $elapsed s)" test "$elapsed" -ge 2 -a "$elapsed" -le 4

# --- The control socket: a socket must belong to the caller.
in_c "$CTLREQ" -u $NOBODY -t 4 "$SOCK" "INTENT $S4 24 5353482d322e302d" >"$TMP/steal.out" 2>/dev/null || true
check "nobody passing root's socket: ERR not-your-socket" \
	[ "$(cat "$TMP/steal.out")" = "ERR not-your-socket" ]
in_c "$CTLREQ" -u $NOBODY -l -t 4 "$SOCK" "INTENT $S4 24 5353482d322e302d" >"$TMP/own.out" 2>/dev/null || true
check "nobody passing its own socket: OK" [ "$(cat "$TMP/own.out")" = OK ]
in_c "$CTLREQ" -t 4 "$SOCK" "INTENT $S4 24 5353482d322e302d" >"$TMP/root.out" 2>/dev/null || true
check "root passing its own socket: OK" [ "$(cat "$TMP/root.out")" = OK ]
in_c "$CTLREQ" -t 4 "$SOCK" "INTENT $S4 24 5353" >"$TMP/len.out" 2>/dev/null || true
check "payload not integrity_len bytes: ERR bad-length" [ "$(cat "$TMP/len.out")" = "ERR bad-length" ]
in_c "$CTLREQ" -t 4 "$SOCK" "INTENT $S4 24 $(printf '%04098d' 0)" >"$TMP/over.out" 2>/dev/null || true
check "a 2049-byte payload, over INTEG_MAX_LEN: ERR bad-request" \
	[ "$(cat "$TMP/over.out")" = "ERR bad-request" ]
in_c "$CTLREQ" -u $NOBODY "$SOCK" "STATUS" >"$TMP/status.out" 2>/dev/null || true
check "STATUS as nobody: ERR not-root" [ "$(cat "$TMP/status.out")" = "ERR not-root" ]
in_c "$CTLREQ" "$SOCK" "HELLO" >"$TMP/junk.out" 2>/dev/null || true
check "garbage: ERR bad-request" [ "$(cat "$TMP/junk.out")" = "ERR bad-request" ]
check "the daemon is still running" kill -0 "$KGW_PID"
check "the client role took the two intents knock-connect made" \
	[ "$(counter client_intents_used "$NS_C")" = 2 ]
in_c "$CTLREQ" "$SOCK" STATUS >"$TMP/status_root.out" 2>/dev/null || true
check "STATUS as root ends with END" [ "$(tail -n 1 "$TMP/status_root.out")" = END ]
check "STATUS counts the refused socket" grep -Eq 'ctl_err_not_your_socket[ =]1$' "$TMP/status_root.out"
check "STATUS counts the over-long payload" grep -Eq 'ctl_bad_payload_too_long[ =]1$' "$TMP/status_root.out"

# --- A clean stop removes the socket; then it is "not running" again.
kill "$KGW_PID"
wait_for 5 sh -c "! kill -0 $KGW_PID"
check "SIGTERM: the control socket is removed" [ ! -e "$SOCK" ]
kc stopped "$KC" -c "$TMP/client.conf" $S4 23
check "after the stop: exit 3" rc_is stopped 3
finish
