#!/bin/sh
# Operations: sd_notify messages (READY, STATUS with counters, WATCHDOG,
# RELOADING + MONOTONIC_USEC then READY around a reload, STOPPING); a key
# rotated by SIGHUP keeps an open ssh session alive and changes which knocks
# are accepted; a broken config on reload is refused with FILE:LINE and the
# daemon keeps serving; `knockgw status` reports; SIGTERM exits 0 and leaves
# no table.
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
OLD=$(key_file old)
NEW=$(key_file new)
server_conf() { # KEYNAME -> server.conf protecting port 22 with that key only
	cat >"$TMP/server.conf" <<-EOC
	control_socket = "$TMP/server.sock";
	keys = ( { name = "old"; file = "$OLD"; }, { name = "new"; file = "$NEW"; } );
	protect = ( { port = 22; mode = "native"; keys = [ "$1" ]; } );
	EOC
}
client_conf() {
	cat >"$TMP/client.conf" <<-EOC
	control_socket = "$TMP/client.sock";
	keys = ( { name = "k"; file = "$1"; } );
	knock = ( { dst = "$S4"; port = 22; mode = "native"; key = "k"; } );
	EOC
}
server_conf old
client_conf "$OLD"

python3 "$TOP/tests/netns/lib/notify_listen.py" "$TMP/notify.sock" "$TMP/notify.log" 120 &
PIDS="$PIDS $!"
wait_for 5 test -S "$TMP/notify.sock"
NOTIFY_SOCKET=$TMP/notify.sock WATCHDOG_USEC=1000000 start_knockgw "$NS_S" "$TMP/server.conf"
SRV=$KGW_PID
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID
KGW_PID=$SRV

check "READY=1 once the queues and table are up" wait_for 5 grep -qx 'READY=1' "$TMP/notify.log"
check "WATCHDOG=1 pings" wait_for 5 grep -qx 'WATCHDOG=1' "$TMP/notify.log"
# After setup only CAP_NET_ADMIN (bit 12) remains, in every thread.
caps_only_net_admin() {
	for t in /proc/$SRV/task/*; do
		for f in CapEff CapPrm CapBnd; do
			[ "$(awk -v f="$f:" '$1 == f { print $2 }' "$t/status")" = 0000000000001000 ] ||
				return 1
		done
	done
}
check "the running daemon keeps only CAP_NET_ADMIN" caps_only_net_admin

SSH="ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
	-o ConnectTimeout=10 -i $TMP/userkey"
# A session that must outlive the key rotation.
in_c $SSH root@$S4 'echo started; sleep 6; echo still-alive' >"$TMP/long.out" 2>/dev/null &
long=$!
check "the long session started with the old key" wait_for 10 grep -q started "$TMP/long.out"
check "STATUS= carries live counters" \
	wait_for 5 grep -q '^STATUS=knocks accepted [1-9]' "$TMP/notify.log"

# Rotate: the server now takes only the new key; so does the client.
server_conf new
client_conf "$NEW"
kill -HUP "$SRV"
kill -HUP "$CLI_PID"
check "the server reloaded" wait_for 5 grep -q '^reloaded' "$TMP/knockgw-$NS_S.log"
check "the client reloaded" wait_for 5 grep -q '^reloaded' "$TMP/knockgw-$NS_C.log"
check "RELOADING=1 with MONOTONIC_USEC, then READY=1" python3 - "$TMP/notify.log" <<'EOPY'
import sys
lines = open(sys.argv[1]).read().split("\n")
i = lines.index("RELOADING=1")
assert lines[i + 1].startswith("MONOTONIC_USEC=") and int(lines[i + 1].split("=")[1]) > 0
assert "READY=1" in lines[i + 2:]
EOPY
out=$(in_c $SSH root@$S4 echo new-key 2>/dev/null) || true
check "a new connection knocks with the new key" [ "$out" = new-key ]
# The prober's SYN goes out through the client's own output chain, where the
# client daemon would knock it: send it from a port that has no knock entry.
knock_with() { # KEYFILE -> answer flags to a knock with it
	v=$("$KC" isn --mode native --key-file "$1" --dst $S4 --port 22 --tsval 77)
	in_c $PROBER probe --iface vc --src $C4 --dst $S4 --sport 40555 --dport 22 \
		--seq "0x$v" --tsval 77 >"$TMP/k.json"
	json "$TMP/k.json" "(j['answer'] or {}).get('flagstr')"
}
kill "$CLI_PID"
wait_for 5 sh -c "! kill -0 $CLI_PID"
# Its table stays (on_stop "hide") and would hold the prober's SYN.
in_c "$KNOCKGW" flush -c "$TMP/client.conf" >/dev/null
check "a knock with the removed old key is refused" [ "$(knock_with "$OLD")" = RA ]
check "a knock with the new key is accepted" [ "$(knock_with "$NEW")" = SA ]
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID
KGW_PID=$SRV
wait "$long" || true
check "the session opened before the rotation is still alive" grep -q still-alive "$TMP/long.out"

# A broken file on reload: refused with FILE:LINE, the old config serves on.
printf 'protect = ( { port = 22; mode = "native"; keys = [ "nosuchkey" ]; } );\n' \
	>"$TMP/server.conf"
kill -HUP "$SRV"
check "a broken reload is refused" wait_for 5 grep -q 'reload refused' "$TMP/knockgw-$NS_S.log"
check "with the error as FILE:LINE: message" \
	grep -q "^$TMP/server.conf:1: .*nosuchkey" "$TMP/knockgw-$NS_S.log"
out=$(in_c $SSH root@$S4 echo still-serving 2>/dev/null) || true
check "the daemon keeps serving the previous configuration" [ "$out" = still-serving ]

in_s "$KNOCKGW" status -c "$TMP/client.conf" >/dev/null 2>&1 || true
cat >"$TMP/status.conf" <<EOC
control_socket = "$TMP/server.sock";
EOC
in_s "$KNOCKGW" status -c "$TMP/status.conf" >"$TMP/status.out" 2>&1
check "knockgw status reports the port and its counters" \
	grep -q '^port 22 mode native: accepted [1-9]' "$TMP/status.out"
check "knockgw status reports the reload" grep -q '1 reload(s)' "$TMP/status.out"
check "knockgw status counts the refused reload" grep -q 'reload(s), 1 refused' "$TMP/status.out"

kill "$SRV"
if wait "$SRV"; then rc=0; else rc=$?; fi
check "SIGTERM: exit status 0" [ $rc = 0 ]
check "SIGTERM: STOPPING=1 sent" grep -qx 'STOPPING=1' "$TMP/notify.log"
check "SIGTERM: the table stays, hiding (on_stop hide)" has_table
finish
