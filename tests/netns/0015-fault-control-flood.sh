#!/bin/sh
# Fault: the control socket flooded with bad clients for a bounded time (8 s):
# garbage lines, binary bytes without LF, over-long lines, clients that
# never send or stall half-way, stray descriptors, instant hang-ups; as root
# (up to 150 at once, against 64 slots) and as uid nobody (against its 8).
# Meanwhile knocks are answered as always; afterwards a QUERY (ctlreq) and
# `knockgw status` get their answers, the counters show what the flood was
# (parse errors by kind, timeouts, busy refusals, stray descriptors), and
# the daemon holds no more descriptors than before.
#
#   client ns $NS_C                       server ns $NS_S
#   +-----------------------+             +-----------------------------------+
#   | prober.py: knocks and |---- veth ---| sshd :22, knockgw protects 22;    |
#   | plain SYNs to :22     |             | knock entry 198.51.100.7:22 (what |
#   +-----------------------+             | QUERY asks); ctlflood.py x2,      |
#                                         | ctlreq -> $TMP/server.sock        |
#                                         +-----------------------------------+
. "$(dirname "$0")/lib/lib.sh"

NOBODY=65534
CTLREQ=$BUILD/tools/ctlreq
SOCK=$TMP/server.sock
FLOOD=$TOP/tests/netns/lib/ctlflood.py
SECONDS_FLOOD=8

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)
cat >"$TMP/knockgw.conf" <<EOC
control_socket = "$SOCK";
keys = ( { name = "k"; file = "$K"; } );
protect = ( { port = 22; mode = "native"; keys = [ "k" ]; } );
knock = ( { dst = "198.51.100.7"; port = 22; mode = "native"; key = "k"; } );
EOC
start_knockgw "$NS_S" "$TMP/knockgw.conf"
LOG=$TMP/knockgw-$NS_S.log

SPORT=45000
# a fresh knock gets SYN-ACK, a plain SYN the closed-port RST (lib.sh)
serving() { knock_gets SA && plain_gets RA; }
query_ok() {
	[ "$(in_s "$CTLREQ" "$SOCK" "QUERY 198.51.100.7 22" 2>/dev/null)" = "OK knock integrity=0" ]
}
fds() { ls "/proc/$KGW_PID/fd" | wc -l; }
# ctl NAME: a control socket counter from `knockgw status` ("control NAME N").
ctl() { awk -v n="$1" '$1 == "control" && $2 == n { print $3 }' "$TMP/status.out"; }

check "before: knocks are answered" serving
check "before: QUERY answers OK knock" query_ok
FDS_BEFORE=$(fds)

in_s python3 "$FLOOD" "$SOCK" --seconds $SECONDS_FLOOD --max-open 150 --seed 1 \
	>"$TMP/flood-root.json" 2>"$TMP/flood-root.err" &
FLOOD_ROOT=$!
in_s setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups /usr/bin/python3 "$FLOOD" "$SOCK" \
	--seconds $SECONDS_FLOOD --max-open 40 --seed 2 \
	>"$TMP/flood-nobody.json" 2>"$TMP/flood-nobody.err" &
FLOOD_NOBODY=$!
PIDS="$PIDS $FLOOD_ROOT $FLOOD_NOBODY"

# While it lasts: the data path does not notice (bounded: 3 rounds).
sleep 1
during=0
for _ in 1 2 3; do
	serving && during=$((during + 1))
done
check "during the flood: knocks are answered (3 of 3)" [ $during = 3 ]
check "during the flood: the daemon runs" kill -0 "$KGW_PID"

# The flooders end by themselves: SECONDS_FLOOD, then at most 3 s per client.
rc_root=0 rc_nobody=0
wait "$FLOOD_ROOT" || rc_root=$?
wait "$FLOOD_NOBODY" || rc_nobody=$?
check "the root flooder ran to its end" [ $rc_root = 0 ]
check "the nobody flooder ran to its end" [ $rc_nobody = 0 ]
cat "$TMP/flood-root.err" "$TMP/flood-nobody.err" >&2
opened=$(json "$TMP/flood-root.json" "j['opened'] + 0")
opened=$((opened + $(json "$TMP/flood-nobody.json" "j['opened'] + 0")))
echo "# flood: $opened connections; root $(cat "$TMP/flood-root.json")"
echo "# flood: nobody $(cat "$TMP/flood-nobody.json")"
check "the flood opened thousands of connections" [ "$opened" -ge 1000 ]
check "valid queries in the flood were answered OK" \
	[ "$(json "$TMP/flood-root.json" "j['valid_ok']")" -gt 0 ]

check "after: the daemon runs" kill -0 "$KGW_PID"
check "after: QUERY answers OK knock" wait_for 5 query_ok
check "after: knocks are answered" serving
in_s "$KNOCKGW" status -c "$TMP/knockgw.conf" >"$TMP/status.out" 2>&1
check "after: knockgw status answers" grep -q '^knockgw running' "$TMP/status.out"
check "counted: garbage lines (bad_char)" [ "$(ctl ctl_bad_bad_char)" -gt 0 ]
check "counted: over-long lines (too_long)" [ "$(ctl ctl_bad_too_long)" -gt 0 ]
check "counted: no LF before the end (no_newline)" [ "$(ctl ctl_bad_no_newline)" -gt 0 ]
check "counted: silent and stalled clients dropped (timeouts)" [ "$(ctl ctl_timeouts)" -gt 0 ]
check "counted: busy refusals (slots, or nobody's 8)" [ "$(ctl ctl_refused_busy)" -gt 0 ]
check "counted: stray descriptors" [ "$(ctl ctl_stray_fds)" -gt 0 ]
check "counted: bad-request replies" [ "$(ctl ctl_err_bad_request)" -gt 0 ]
check "counted: connections accepted" [ "$(ctl ctl_connections)" -ge 1000 ]
# Every connection and passed descriptor is closed again (1 s timeout).
check "no descriptor leaked ($FDS_BEFORE before)" wait_for 5 sh -c "[ \$(ls /proc/$KGW_PID/fd | wc -l) -le $FDS_BEFORE ]"
check "the peer-triggered messages were rate-limited" \
	[ "$(grep -c '^control: ' "$LOG")" -lt 1000 ]

kill "$KGW_PID"
if wait "$KGW_PID"; then rc=0; else rc=$?; fi
check "SIGTERM after the flood: exit status 0" [ $rc = 0 ]
check "the socket file is removed" [ ! -e "$SOCK" ]
finish
